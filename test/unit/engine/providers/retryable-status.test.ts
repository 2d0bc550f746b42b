import { describe, expect, it } from "vitest";
import { isRetryableStatus } from "../../../../engine/providers/provider-error.js";

// One rule for every provider's HTTP statuses (chat, speech, recognition): the same request is
// worth sending again after 408, 429 and 5xx, never after another 4xx.
describe("isRetryableStatus", () => {
  it("retries timeouts, rate limits and server faults only", () => {
    expect([408, 429, 500, 502, 503, 504, 599].map(isRetryableStatus)).toEqual([true, true, true, true, true, true, true]);
    expect([400, 401, 403, 404, 409, 413, 422].map(isRetryableStatus)).toEqual([false, false, false, false, false, false, false]);
  });
});
