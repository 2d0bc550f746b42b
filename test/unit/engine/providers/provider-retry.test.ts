import { describe, expect, it } from "vitest";
import { ProviderError } from "../../../../engine/providers/provider-error.js";
import { parseRetryAfter, retryBeforeFirstItem, type RetryPolicy } from "../../../../engine/providers/provider-retry.js";

const NO_WAIT: RetryPolicy = { delaysMs: [0, 0], maxRetryAfterMs: 2000 };

const retryable = (retryAfterMs: number | null = null) => new ProviderError("HTTP 503", { retryable: true, retryAfterMs });

/** Attempts that go as `plan` says: fail with the error before any item, or yield "a", "b" (failing after "a" for "fail-after-first"). */
function planned(plan: Array<Error | "ok" | "fail-after-first">) {
  let attempts = 0;
  const attempt = async function* (): AsyncGenerator<string> {
    const step = plan[attempts++] ?? "ok";
    if (step instanceof Error) throw step;
    yield "a";
    if (step === "fail-after-first") throw retryable();
    yield "b";
  };
  return { attempt, attempts: () => attempts };
}

async function collect(items: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe("retryBeforeFirstItem", () => {
  it("tries again after a retryable failure before the first item, and succeeds", async () => {
    const run = planned([retryable(), retryable(), "ok"]);
    expect(await collect(retryBeforeFirstItem(run.attempt, NO_WAIT, new AbortController().signal))).toEqual(["a", "b"]);
    expect(run.attempts()).toBe(3);
  });

  it("tells the policy's onRetry of each retry it makes, with the error, and of none it does not make", async () => {
    const told: unknown[] = [];
    const first = retryable();
    const last = retryable();
    const run = planned([first, last, "ok"]);
    const policy: RetryPolicy = { delaysMs: [0], maxRetryAfterMs: 2000, onRetry: (error) => told.push(error) };
    await expect(collect(retryBeforeFirstItem(run.attempt, policy, new AbortController().signal))).rejects.toBe(last);
    expect(told).toEqual([first]);
  });

  it("gives up with the last error after as many retries as the policy has delays", async () => {
    const last = retryable();
    const run = planned([retryable(), retryable(), last, "ok"]);
    await expect(collect(retryBeforeFirstItem(run.attempt, NO_WAIT, new AbortController().signal))).rejects.toBe(last);
    expect(run.attempts()).toBe(3);
  });

  it.each([
    ["a provider error that is not retryable", new ProviderError("HTTP 401", { retryable: false })],
    ["an error that is not a provider's", new TypeError("a bug")],
    ["a Retry-After longer than the policy waits for", retryable(60_000)],
  ])("does not try again after %s", async (_, error) => {
    const run = planned([error, "ok"]);
    await expect(collect(retryBeforeFirstItem(run.attempt, NO_WAIT, new AbortController().signal))).rejects.toBe(error);
    expect(run.attempts()).toBe(1);
  });

  it("does not try again once an item is out", async () => {
    const run = planned(["fail-after-first", "ok"]);
    const received: string[] = [];
    await expect(
      (async () => {
        for await (const item of retryBeforeFirstItem(run.attempt, NO_WAIT, new AbortController().signal)) received.push(item);
      })(),
    ).rejects.toMatchObject({ retryable: true });
    expect(received).toEqual(["a"]);
    expect(run.attempts()).toBe(1);
  });

  it("ends quietly, at once, when aborted while waiting to try again", async () => {
    // A minute's wait: far past the test's timeout if the abort were not honoured.
    const run = planned([retryable(), "ok"]);
    const abort = new AbortController();
    const items = collect(retryBeforeFirstItem(run.attempt, { delaysMs: [60_000], maxRetryAfterMs: 2000 }, abort.signal));
    await new Promise((resolve) => setTimeout(resolve, 20));
    abort.abort();
    expect(await items).toEqual([]);
    expect(run.attempts()).toBe(1);
  });
});

describe("parseRetryAfter", () => {
  it("reads seconds and HTTP dates, and nothing else", () => {
    const now = Date.parse("2025-03-01T10:00:00Z");
    expect(parseRetryAfter("2", now)).toBe(2000);
    expect(parseRetryAfter("Sat, 01 Mar 2025 10:00:03 GMT", now)).toBe(3000);
    expect(parseRetryAfter("Sat, 01 Mar 2025 09:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });
});
