import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, startTestApp, type ApiResponse, type TestAccount, type TestApp } from "../helpers/test-app.js";

// An agent's `redact` (issue 32): what its calls must not keep. Checked when saved, with the
// bad item named; patterns must run on RE2 (linear time), so a pattern that would backtrack
// without end, or needs backreferences or lookaround, is refused.

let app: TestApp;
let acct: TestAccount;
const base = { name: "Payments", system_prompt: "You take payments.", voice_id: "flite-slt" };
const fieldsOf = (res: ApiResponse) => errorOf(res).details.fields.map((f: { field: string }) => f.field);

beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account();
});
afterAll(async () => {
  await app.close();
});

describe("an agent's redact setting", () => {
  it("is empty by default, stored and shown as given, and changed by PATCH", async () => {
    const plain = await app.request("POST", "/v1/agents", { key: acct.key, body: base });
    expect(plain.body.redact).toEqual([]);
    const redact = ["card_number", "ssn", { name: "member_id", pattern: "M-\\d{6}" }];
    const created = await app.request("POST", "/v1/agents", { key: acct.key, body: { ...base, redact } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.redact).toEqual(redact);
    const patched = await app.request("PATCH", `/v1/agents/${created.body.id}`, { key: acct.key, body: { redact: ["email"] } });
    expect(patched.body.redact).toEqual(["email"]);
    expect((await app.request("GET", `/v1/agents/${created.body.id}`, { key: acct.key })).body.redact).toEqual(["email"]);
  });

  it("refuses what cannot be run, naming the item", async () => {
    const cases: Array<[unknown, string]> = [
      ["card_number", "redact"],
      [["credit_card"], "redact[0]"],
      [["ssn", "ssn"], "redact[1]"],
      [["ssn", { name: "Bad Name", pattern: "x" }], "redact[1].name"],
      [[{ name: "ssn", pattern: "x" }], "redact[0].name"],
      [[{ name: "twice", pattern: "(a)\\1" }], "redact[0].pattern"],
      [[{ name: "ahead", pattern: "a(?=b)" }], "redact[0].pattern"],
      [[{ name: "empty", pattern: "x*" }], "redact[0].pattern"],
      [[{ name: "long", pattern: "a".repeat(501) }], "redact[0].pattern"],
      [[{ name: "extra", pattern: "a", flags: "g" }], "redact[0]"],
      [Array.from({ length: 21 }, (_, i) => ({ name: `r${i}`, pattern: `a${i}` })), "redact"],
    ];
    for (const [redact, field] of cases) {
      const res = await app.request("POST", "/v1/agents", { key: acct.key, body: { ...base, redact } });
      expect(res.status, JSON.stringify(redact)).toBe(400);
      expect(fieldsOf(res).some((f: string) => f.startsWith(field)), `${JSON.stringify(redact)}: ${JSON.stringify(fieldsOf(res))}`).toBe(true);
    }
  });

  it("takes a pattern that would backtrack without end in other engines, and runs it in linear time", async () => {
    const res = await app.request("POST", "/v1/agents", { key: acct.key, body: { ...base, redact: [{ name: "nested", pattern: "(a+)+$" }] } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });
});
