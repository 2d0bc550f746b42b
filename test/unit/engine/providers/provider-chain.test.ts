import { describe, expect, it } from "vitest";
import { ProviderChain, type ProviderChainOptions, type ProviderSwitch } from "../../../../engine/providers/provider-chain.js";
import { ProviderError } from "../../../../engine/providers/provider-error.js";

const retryable = (message = "HTTP 503") => new ProviderError(message, { retryable: true });
const refused = () => new ProviderError("HTTP 401", { retryable: false });

/** How a fake link answers one attempt. */
type Plan =
  | { kind: "items"; items: string[] }
  | { kind: "fail-before"; error: Error }
  | { kind: "fail-after"; item: string; error: Error }
  /** Gives nothing until its signal is aborted, then ends as an aborted request does. */
  | { kind: "stall" }
  /** Its first item only after `ms` (it does not watch its signal). */
  | { kind: "slow"; ms: number; items: string[] };

/** A fake provider: what each attempt on it did, and the signal it was given. */
class Link {
  readonly signals: AbortSignal[] = [];
  constructor(
    readonly name: string,
    private readonly plan: Plan,
  ) {}

  async *attempt(signal: AbortSignal): AsyncGenerator<string> {
    this.signals.push(signal);
    const plan = this.plan;
    switch (plan.kind) {
      case "items":
        yield* plan.items;
        return;
      case "fail-before":
        throw plan.error;
      case "fail-after":
        yield plan.item;
        throw plan.error;
      case "stall":
        await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));
        throw new DOMException("aborted", "AbortError");
      case "slow":
        await new Promise((resolve) => setTimeout(resolve, plan.ms));
        yield* plan.items;
    }
  }
}

function chainOf(links: Link[], options: ProviderChainOptions = {}) {
  const switches: ProviderSwitch[] = [];
  const chain = new ProviderChain("tts", links, { onSwitch: (change) => switches.push(change), ...options });
  return { chain, switches };
}

/** Everything serve() yields, and what it returned (the index that served) or threw. */
async function drain(run: AsyncGenerator<string, number>): Promise<{ items: string[]; served?: number; error?: unknown }> {
  const items: string[] = [];
  try {
    for (;;) {
      const next = await run.next();
      if (next.done) return { items, served: next.value };
      items.push(next.value);
    }
  } catch (error) {
    return { items, error };
  }
}

const serveAll = (chain: ProviderChain<Link>, signal = new AbortController().signal, options: Parameters<ProviderChain<Link>["serve"]>[2] = {}) =>
  drain(chain.serve((i, s) => chain.links[i]!.attempt(s), signal, options));

describe("ProviderChain.order", () => {
  it("puts a link that failed within the cooldown last, and back first once it has passed", async () => {
    let now = 1_000;
    const { chain } = chainOf([new Link("a", { kind: "fail-before", error: retryable() }), new Link("b", { kind: "items", items: ["x"] }), new Link("c", { kind: "items", items: [] })], {
      cooldownMs: 30_000,
      now: () => now,
    });
    expect(chain.order()).toEqual([0, 1, 2]);
    expect(await serveAll(chain)).toEqual({ items: ["x"], served: 1 });
    now += 29_999;
    expect(chain.order()).toEqual([1, 2, 0]);
    now += 1;
    expect(chain.order()).toEqual([0, 1, 2]);
  });

  it("puts `preferred` first, unless it is cooling down", () => {
    let now = 0;
    const { chain } = chainOf([new Link("a", { kind: "stall" }), new Link("b", { kind: "stall" }), new Link("c", { kind: "stall" })], { cooldownMs: 100, now: () => now });
    expect(chain.order(2)).toEqual([2, 0, 1]);
    expect(chain.order(1)).toEqual([1, 0, 2]);
    chain.switchFrom(2, 0, "error");
    expect(chain.order(2)).toEqual([0, 1, 2]);
    now = 100;
    expect(chain.order(2)).toEqual([2, 0, 1]);
  });
});

describe("ProviderChain.serve", () => {
  it("switches to the next link on a retryable error before the first item, and returns the index that served", async () => {
    const { chain, switches } = chainOf([new Link("a", { kind: "fail-before", error: retryable() }), new Link("b", { kind: "items", items: ["x", "y"] })]);
    expect(await serveAll(chain)).toEqual({ items: ["x", "y"], served: 1 });
    expect(switches).toEqual([{ stage: "tts", from: "a", to: "b", reason: "error" }]);
  });

  it("returns the first link's index when it serves, with no switch", async () => {
    const { chain, switches } = chainOf([new Link("a", { kind: "items", items: ["x"] }), new Link("b", { kind: "items", items: ["y"] })]);
    expect(await serveAll(chain)).toEqual({ items: ["x"], served: 0 });
    expect(switches).toEqual([]);
    expect(chain.links[1]!.signals).toHaveLength(0);
  });

  it("does not switch once an item was yielded: the error is thrown as it is", async () => {
    const error = retryable("lost connection");
    const { chain, switches } = chainOf([new Link("a", { kind: "fail-after", item: "x", error }), new Link("b", { kind: "items", items: ["y"] })]);
    const result = await serveAll(chain);
    expect(result.items).toEqual(["x"]);
    expect(result.error).toBe(error);
    expect(switches).toEqual([]);
    expect(chain.links[1]!.signals).toHaveLength(0);
  });

  it("does not switch on a non-retryable error, nor on an error that is not a ProviderError", async () => {
    for (const error of [refused(), new TypeError("a bug")]) {
      const { chain, switches } = chainOf([new Link("a", { kind: "fail-before", error }), new Link("b", { kind: "items", items: ["y"] })]);
      const result = await serveAll(chain);
      expect(result).toEqual({ items: [], error });
      expect(switches).toEqual([]);
      expect(chain.links[1]!.signals).toHaveLength(0);
    }
  });

  it("throws the last link's error as the request's", async () => {
    const last = retryable("the last one");
    const { chain, switches } = chainOf([new Link("a", { kind: "fail-before", error: retryable("first") }), new Link("b", { kind: "fail-before", error: retryable("second") }), new Link("c", { kind: "fail-before", error: last })]);
    expect(await serveAll(chain)).toEqual({ items: [], error: last });
    expect(switches.map((s) => [s.from, s.to, s.reason])).toEqual([
      ["a", "b", "error"],
      ["b", "c", "error"],
    ]);
  });

  it("stops a link with no first output within the timeout (its signal aborted) and the next serves", async () => {
    const { chain, switches } = chainOf([new Link("a", { kind: "stall" }), new Link("b", { kind: "items", items: ["y"] })], { firstOutputTimeoutMs: 50 });
    expect(await serveAll(chain)).toEqual({ items: ["y"], served: 1 });
    expect(chain.links[0]!.signals[0]!.aborted).toBe(true);
    expect(chain.links[1]!.signals[0]!.aborted).toBe(false);
    expect(switches).toEqual([{ stage: "tts", from: "a", to: "b", reason: "timeout" }]);
  });

  it("drops a timed-out link's late output (it did not watch its signal) and the next serves", async () => {
    const { chain, switches } = chainOf([new Link("a", { kind: "slow", ms: 200, items: ["late"] }), new Link("b", { kind: "items", items: ["y"] })], { firstOutputTimeoutMs: 50 });
    expect(await serveAll(chain)).toEqual({ items: ["y"], served: 1 });
    expect(switches.map((s) => s.reason)).toEqual(["timeout"]);
  });

  it("has no first-output timeout when firstOutputTimeoutMs is 0", async () => {
    const { chain, switches } = chainOf([new Link("a", { kind: "slow", ms: 150, items: ["x"] }), new Link("b", { kind: "items", items: ["y"] })], { firstOutputTimeoutMs: 0 });
    expect(await serveAll(chain)).toEqual({ items: ["x"], served: 0 });
    expect(switches).toEqual([]);
    expect(chain.links[0]!.signals[0]!.aborted).toBe(false);
  });

  it("keeps the error and lets a link run past the timeout when mayReplace says no", async () => {
    const error = retryable();
    {
      const { chain, switches } = chainOf([new Link("a", { kind: "fail-before", error }), new Link("b", { kind: "items", items: ["y"] })]);
      expect(await serveAll(chain, undefined, { mayReplace: (i) => i !== 0 })).toEqual({ items: [], error });
      expect(switches).toEqual([]);
    }
    {
      const { chain, switches } = chainOf([new Link("a", { kind: "slow", ms: 150, items: ["x"] }), new Link("b", { kind: "items", items: ["y"] })], { firstOutputTimeoutMs: 50 });
      expect(await serveAll(chain, undefined, { mayReplace: () => false })).toEqual({ items: ["x"], served: 0 });
      expect(chain.links[0]!.signals[0]!.aborted).toBe(false);
      expect(chain.links[1]!.signals).toHaveLength(0);
      expect(switches).toEqual([]);
    }
  });

  it("stops everything on the caller's abort, with no switch", async () => {
    const caller = new AbortController();
    const { chain, switches } = chainOf([new Link("a", { kind: "stall" }), new Link("b", { kind: "items", items: ["y"] })], { firstOutputTimeoutMs: 0 });
    const result = serveAll(chain, caller.signal);
    await new Promise((resolve) => setTimeout(resolve, 10));
    caller.abort();
    const { items, error } = await result;
    expect(items).toEqual([]);
    expect((error as Error).name).toBe("AbortError");
    expect(chain.links[0]!.signals[0]!.aborted).toBe(true);
    expect(chain.links[1]!.signals).toHaveLength(0);
    expect(switches).toEqual([]);
  });

  it("gives an attempt an aborted signal when the caller's was aborted before serve()", async () => {
    const caller = new AbortController();
    caller.abort();
    const { chain, switches } = chainOf([new Link("a", { kind: "stall" }), new Link("b", { kind: "items", items: ["y"] })], { firstOutputTimeoutMs: 0 });
    const { items } = await serveAll(chain, caller.signal);
    expect(items).toEqual([]);
    expect(chain.links[0]!.signals[0]!.aborted).toBe(true);
    expect(chain.links[1]!.signals).toHaveLength(0);
    expect(switches).toEqual([]);
  });

  it("tries `preferred` first", async () => {
    const { chain, switches } = chainOf([new Link("a", { kind: "items", items: ["x"] }), new Link("b", { kind: "items", items: ["y"] })]);
    expect(await serveAll(chain, undefined, { preferred: 1 })).toEqual({ items: ["y"], served: 1 });
    expect(chain.links[0]!.signals).toHaveLength(0);
    expect(switches).toEqual([]);
  });

  it("passes over a link that failed for a later request (the cooldown), and tries it last", async () => {
    let now = 0;
    const a = new Link("a", { kind: "fail-before", error: retryable() });
    const { chain } = chainOf([a, new Link("b", { kind: "items", items: ["y"] })], { now: () => now, cooldownMs: 1_000 });
    await serveAll(chain);
    expect(a.signals).toHaveLength(1);
    now = 500;
    expect(await serveAll(chain)).toEqual({ items: ["y"], served: 1 });
    expect(a.signals).toHaveLength(1);
  });
});
