import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, startTestApp, type ApiResponse, type TestAccount, type TestApp } from "../helpers/test-app.js";

// An agent's transfer_mode (issue 31): `cold` (the carrier's transfer, the default) or `warm`
// (Parley briefs the person at transfer_number first). How it is stored and shown; the
// transfer during a call is the telephony side's.

let app: TestApp;
let acct: TestAccount;

const agentBody = (extra: Record<string, unknown> = {}) => ({
  name: "Front desk",
  system_prompt: "You help.",
  voice_id: "flite-slt",
  transfer_enabled: true,
  transfer_number: "+14155550100",
  ...extra,
});
const createAgent = (extra: Record<string, unknown> = {}) => app.request("POST", "/v1/agents", { key: acct.key, body: agentBody(extra) });
const patchAgent = (id: string, body: Record<string, unknown>) => app.request("PATCH", `/v1/agents/${id}`, { key: acct.key, body });
const getAgent = (id: string) => app.request("GET", `/v1/agents/${id}`, { key: acct.key });
const storedMode = async (id: string) =>
  (await app.parley.services.db.selectFrom("agents").select("transfer_mode").where("id", "=", id).executeTakeFirstOrThrow()).transfer_mode;

/** The refusal's status, code, the fields it names and its message. */
function refusal(res: ApiResponse) {
  const error = errorOf(res);
  return { status: res.status, code: error.code, fields: error.details?.fields?.map((f: { field: string }) => f.field) ?? [], message: JSON.stringify(error) };
}

beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account();
});
afterAll(async () => {
  await app.close();
});

describe("an agent's transfer_mode", () => {
  it("is cold by default, on an agent with or without a transfer number", async () => {
    const created = await createAgent();
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.transfer_mode).toBe("cold");
    expect((await getAgent(created.body.id)).body.transfer_mode).toBe("cold");
    expect(await storedMode(created.body.id)).toBe("cold");

    const plain = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Plain", system_prompt: "You help.", voice_id: "flite-slt" } });
    expect(plain.status, JSON.stringify(plain.body)).toBe(201);
    expect(plain.body.transfer_mode).toBe("cold");
  });

  it("stores and shows warm, and a PATCH switches it back to cold (a PATCH without it leaves it)", async () => {
    const created = await createAgent({ transfer_mode: "warm" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.transfer_mode).toBe("warm");
    expect((await getAgent(created.body.id)).body.transfer_mode).toBe("warm");
    expect(await storedMode(created.body.id)).toBe("warm");

    const renamed = await patchAgent(created.body.id, { name: "Reception" });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body.transfer_mode).toBe("warm");

    const cold = await patchAgent(created.body.id, { transfer_mode: "cold" });
    expect(cold.status, JSON.stringify(cold.body)).toBe(200);
    expect(cold.body.transfer_mode).toBe("cold");
    expect((await getAgent(created.body.id)).body.transfer_mode).toBe("cold");
    expect(await storedMode(created.body.id)).toBe("cold");

    const warm = await patchAgent(created.body.id, { transfer_mode: "warm" });
    expect(warm.body.transfer_mode).toBe("warm");
    expect(await storedMode(created.body.id)).toBe("warm");
  });

  it("refuses any other value with 400 invalid_request naming transfer_mode and listing cold and warm", async () => {
    const existing = (await createAgent()).body.id as string;
    for (const value of ["attended", "WARM", "", null, 1, true]) {
      for (const res of [await createAgent({ transfer_mode: value }), await patchAgent(existing, { transfer_mode: value })]) {
        const refused = refusal(res);
        expect(refused, JSON.stringify(value)).toMatchObject({ status: 400, code: "invalid_request", fields: ["transfer_mode"] });
        expect(refused.message).toContain("cold");
        expect(refused.message).toContain("warm");
      }
    }
    // Nothing was saved by the refused updates.
    expect(await storedMode(existing)).toBe("cold");
  });

  it("is not in the agent list, which shows no transfer settings", async () => {
    const created = await createAgent({ transfer_mode: "warm" });
    const list = await app.request("GET", "/v1/agents?limit=100", { key: acct.key });
    expect(list.status).toBe(200);
    const item = list.body.data.find((agent: { id: string }) => agent.id === created.body.id);
    expect(item).toBeDefined();
    expect(item).not.toHaveProperty("transfer_mode");
    expect(item).not.toHaveProperty("transfer_number");
  });
});
