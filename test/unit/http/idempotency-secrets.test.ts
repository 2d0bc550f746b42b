import { describe, expect, it } from "vitest";
import { openSecretFields, sealSecretFields } from "../../../src/http/idempotency-secrets.js";

const KEY = "pk_live_0123456789abcdefghijklmnopqrstuvwxyzAB";
const SCOPE = ["acct_1", "POST", "/v1/calls/web", "idem-1"];
const BODY = { call_id: "call_1", token: "wct_secret", websocket_url: "wss://x/media/ws?token=wct_secret", expires_at: "t", nested: { n: 1.5e-7 } };

describe("secret fields of a stored Idempotency-Key response", () => {
  it("are stored null in place and sealed; the same key and scope restore the first text byte for byte", () => {
    const stored = sealSecretFields(BODY, ["token", "websocket_url", "absent"], KEY, SCOPE);
    expect(stored.body).toBe(JSON.stringify({ ...BODY, token: null, websocket_url: null }));
    expect(stored.sealed).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    expect(stored.sealed).not.toContain("wct_secret");
    expect(openSecretFields(stored, KEY, SCOPE)).toBe(JSON.stringify(BODY));
  });

  it("cannot be opened with another key or scope, nor once the stored body is changed", () => {
    const stored = sealSecretFields(BODY, ["token", "websocket_url"], KEY, SCOPE);
    expect(openSecretFields(stored, `${KEY}x`, SCOPE)).toBeUndefined();
    expect(openSecretFields(stored, KEY, [...SCOPE.slice(0, 3), "idem-2"])).toBeUndefined();
    expect(openSecretFields({ ...stored, body: stored.body.replace("call_1", "call_2") }, KEY, SCOPE)).toBeUndefined();
    expect(openSecretFields({ ...stored, sealed: "v1.AAAA" }, KEY, SCOPE)).toBeUndefined();
  });

  it("leave a response without them (an error) as it is, unsealed", () => {
    const error = { error: { code: "agent_not_found", message: "m" }, meta: { request_id: "r" } };
    const stored = sealSecretFields(error, ["token"], KEY, SCOPE);
    expect(stored).toEqual({ body: JSON.stringify(error), sealed: null });
    expect(openSecretFields(stored, "another key", SCOPE)).toBe(JSON.stringify(error));
  });
});
