import { brotliCompressSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertCallRow } from "../helpers/call-rows.js";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

let app: TestApp;
let acct: TestAccount;

const minimal = { name: "Receptionist", system_prompt: "You answer calls for a dental clinic.", voice_id: "flite-slt" };

beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account();
});
afterAll(async () => {
  await app.close();
});

const create = (body: unknown, key = acct.key) => app.request("POST", "/v1/agents", { key, body });

describe("POST /v1/agents", () => {
  it("refuses the NUL character anywhere in the body, naming the field, on either database", async () => {
    const inName = await create({ ...minimal, name: "Recep\u0000tionist" });
    expect(inName.status).toBe(400);
    expect(errorOf(inName)).toMatchObject({ code: "invalid_request", message: "name: must not contain the NUL character (U+0000)" });
    const inKey = await create({ ...minimal, metadata: { notes: { ["a\u0000b"]: 1 } } });
    expect(errorOf(inKey).message).toBe("metadata.notes.a\u0000b: must not contain the NUL character (U+0000)");
    const inQuery = await app.request("GET", "/v1/agents?search=a%00b", { key: acct.key });
    expect(errorOf(inQuery).message).toBe("search (query parameter): must not contain the NUL character (U+0000)");
    expect((await create({ ...minimal, name: "Receptionist \u0001" })).status).toBe(201);
  });

  it("creates an agent with the reference's defaults", async () => {
    const res = await create(minimal);
    expect(res.status).toBe(201);
    const agent = res.body;
    expect(agent.id).toMatch(/^agent_[0-9A-Za-z]{20}$/);
    expect(agent).toMatchObject({
      name: "Receptionist",
      system_prompt: minimal.system_prompt,
      voice_id: "flite-slt",
      first_message: null,
      language: "en-US",
      model: "llm-large",
      temperature: 0.7,
      max_tokens: 150,
      interruption_threshold: 0.5,
      end_call_phrases: [],
      status: "active",
      metadata: {},
      transfer_enabled: false,
      transfer_number: null,
      endpointing_mode: "adaptive",
      endpointing_ms: 1500,
    });
    expect(typeof agent.transfer_message).toBe("string");
    expect(agent.updated_at).toBe(agent.created_at);
    expect(new Date(agent.created_at).toISOString()).toBe(agent.created_at);
  });

  it("accepts every field and the guide's aliases", async () => {
    const res = await create({
      name: "Booker",
      personality: "Friendly booking assistant",
      greeting: "Hello {{customer_name}}!",
      voice_id: "flite-rms",
      language: "en-US",
      model: "llm-small",
      temperature: 0.2,
      max_tokens: 300,
      interruption_threshold: 0.9,
      end_call_phrases: ["goodbye", "bye now"],
      metadata: { faq: [{ question: "hours?", answer: "nine to five" }] },
      transfer_enabled: true,
      transfer_number: "+14155550100",
      transfer_message: "Connecting you now.",
      endpointing_ms: 800,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      system_prompt: "Friendly booking assistant",
      first_message: "Hello {{customer_name}}!",
      model: "llm-small",
      transfer_enabled: true,
      transfer_number: "+14155550100",
      endpointing_ms: 800,
    });
    expect(res.body).not.toHaveProperty("personality");
  });

  it.each([
    [{ ...minimal, voice_id: "no-such-voice" }, 400, "invalid_voice_id", "voice_id"],
    [{ name: "x", voice_id: "flite-slt" }, 400, "invalid_system_prompt", "system_prompt"],
    [{ ...minimal, system_prompt: "x".repeat(20_001) }, 400, "invalid_system_prompt", "system_prompt"],
    [{ ...minimal, system_prompt: "   " }, 400, "invalid_system_prompt", "system_prompt"],
    [{ ...minimal, language: "tlh-KL" }, 400, "invalid_language", "language"],
    [{ ...minimal, temperature: 1.5 }, 400, "invalid_request", "temperature"],
    [{ ...minimal, interruption_threshold: -0.1 }, 400, "invalid_request", "interruption_threshold"],
    [{ ...minimal, max_tokens: 1.5 }, 400, "invalid_request", "max_tokens"],
    [{ ...minimal, model: "gpt-9" }, 400, "invalid_request", "model"],
    [{ ...minimal, endpointing_ms: 50 }, 400, "invalid_request", "endpointing_ms"],
    [{ ...minimal, endpointing_mode: "smart" }, 400, "invalid_request", "endpointing_mode"],
    [{ ...minimal, endpointing_mode: null }, 400, "invalid_request", "endpointing_mode"],
    [{ ...minimal, end_call_phrases: "bye" }, 400, "invalid_request", "end_call_phrases"],
    [{ ...minimal, metadata: [1, 2] }, 400, "invalid_request", "metadata"],
    [{ ...minimal, metadata: { booking_hours: { start: "17:00", end: "09:00" } } }, 400, "invalid_request", "metadata.booking_hours"],
    [{ ...minimal, colour: "blue" }, 400, "invalid_request", "colour"],
    [{ ...minimal, status: "inactive" }, 400, "invalid_request", "status"],
    [{ ...minimal, transfer_enabled: true }, 400, "invalid_request", "transfer_number"],
    [{ ...minimal, transfer_number: "555-1234" }, 400, "invalid_request", "transfer_number"],
    [{ ...minimal, personality: "a", system_prompt: "b" }, 400, "invalid_system_prompt", "system_prompt"],
    [{ system_prompt: "p", voice_id: "flite-slt" }, 400, "invalid_request", "name"],
  ])("refuses %j with %i %s naming %s", async (body, status, code, field) => {
    const res = await create(body);
    expect(res.status).toBe(status);
    const error = errorOf(res);
    expect(error.code).toBe(code);
    expect(error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    expect(error.message).toContain(field);
    expect(res.body.meta.request_id).toBe(res.headers.get("x-request-id"));
  });

  it("refuses malformed JSON, non-JSON bodies and bodies over the limit", async () => {
    const bad = await app.request("POST", "/v1/agents", { key: acct.key, rawBody: '{"name": ', headers: { "content-type": "application/json" } });
    expect(bad.status).toBe(400);
    expect(errorOf(bad).code).toBe("invalid_json");

    const text = await app.request("POST", "/v1/agents", { key: acct.key, rawBody: "name=x", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(text.status).toBe(415);
    expect(errorOf(text).code).toBe("unsupported_media_type");

    const big = await create({ ...minimal, metadata: { blob: "x".repeat(app.config.bodyLimitBytes) } });
    expect(big.status).toBe(413);
    expect(errorOf(big).code).toBe("payload_too_large");
  });

  it("refuses metadata nested deeper than 32 levels with 400 on metadata, however deep (not a 500 from serialising it)", async () => {
    // Built as text: a few thousand levels would overflow this test's own JSON.stringify too.
    const nested = (levels: number) => '{"a":'.repeat(levels - 1) + "{}" + "}".repeat(levels - 1);
    const send = (levels: number) =>
      app.request("POST", "/v1/agents", { key: acct.key, rawBody: `{"name":"Deep","voice_id":"flite-slt","system_prompt":"x","metadata":${nested(levels)}}`, headers: { "content-type": "application/json" } });
    expect((await send(32)).status).toBe(201);
    for (const levels of [33, 5_000, 50_000]) {
      const res = await send(levels);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(errorOf(res)).toMatchObject({ code: "invalid_request", message: "metadata: must nest at most 32 levels deep" });
    }
  });

  it("reads a compressed body, and refuses one that does not decompress with 400 invalid_json naming the encoding, not a 500", async () => {
    const send = (body: Uint8Array, encoding: string) =>
      fetch(`${app.baseUrl}/v1/agents`, { method: "POST", headers: { authorization: `Bearer ${acct.key}`, "content-type": "application/json", "content-encoding": encoding }, body });
    expect((await send(gzipSync(JSON.stringify(minimal)), "gzip")).status).toBe(201);
    expect((await send(brotliCompressSync(JSON.stringify(minimal)), "br")).status).toBe(201);
    for (const encoding of ["gzip", "deflate", "br"]) {
      const res = await send(Buffer.from(JSON.stringify(minimal)), encoding);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(body.error.code).toBe("invalid_json");
      expect(body.error.message).toContain(`Request body could not be read (Content-Encoding: ${encoding})`);
    }
  });

  it("stops at the plan's agent limit with 402 agent_limit_reached", async () => {
    const small = await app.account();
    await app.parley.services.accounts.setLimits(small.id, { agents: 2 });
    expect((await create(minimal, small.key)).status).toBe(201);
    expect((await create(minimal, small.key)).status).toBe(201);
    const third = await create(minimal, small.key);
    expect(third.status).toBe(402);
    expect(errorOf(third).code).toBe("agent_limit_reached");
  });
});

describe("endpointing_mode", () => {
  const patch = (id: string, body: unknown) => app.request("PATCH", `/v1/agents/${id}`, { key: acct.key, body });

  it("takes the mode's endpointing_ms when none is given, and keeps given values", async () => {
    const fixed = await create({ ...minimal, endpointing_mode: "fixed" });
    expect(fixed.status).toBe(201);
    expect(fixed.body).toMatchObject({ endpointing_mode: "fixed", endpointing_ms: 500 });
    const adaptive = await create({ ...minimal, endpointing_mode: "adaptive" });
    expect(adaptive.body).toMatchObject({ endpointing_mode: "adaptive", endpointing_ms: 1500 });
    const given = await create({ ...minimal, endpointing_mode: "fixed", endpointing_ms: 900 });
    expect(given.body).toMatchObject({ endpointing_mode: "fixed", endpointing_ms: 900 });
    const cap = await create({ ...minimal, endpointing_ms: 2500 });
    expect(cap.body).toMatchObject({ endpointing_mode: "adaptive", endpointing_ms: 2500 });
    const read = await app.request("GET", `/v1/agents/${given.body.id}`, { key: acct.key });
    expect(read.body).toMatchObject({ endpointing_mode: "fixed", endpointing_ms: 900 });
  });

  it("resets endpointing_ms to the new mode's default when the mode changes without one", async () => {
    const { body: agent } = await create(minimal);
    const toFixed = await patch(agent.id, { endpointing_mode: "fixed" });
    expect(toFixed.status).toBe(200);
    expect(toFixed.body).toMatchObject({ endpointing_mode: "fixed", endpointing_ms: 500 });
    const back = await patch(agent.id, { endpointing_mode: "adaptive" });
    expect(back.body).toMatchObject({ endpointing_mode: "adaptive", endpointing_ms: 1500 });
    const both = await patch(agent.id, { endpointing_mode: "fixed", endpointing_ms: 700 });
    expect(both.body).toMatchObject({ endpointing_mode: "fixed", endpointing_ms: 700 });
    const read = await app.request("GET", `/v1/agents/${agent.id}`, { key: acct.key });
    expect(read.body).toMatchObject({ endpointing_mode: "fixed", endpointing_ms: 700 });
  });

  it("changes only the given field otherwise", async () => {
    const { body: agent } = await create({ ...minimal, endpointing_mode: "fixed", endpointing_ms: 800 });
    const same = await patch(agent.id, { endpointing_mode: "fixed" });
    expect(same.body).toMatchObject({ endpointing_mode: "fixed", endpointing_ms: 800 });
    const ms = await patch(agent.id, { endpointing_ms: 300 });
    expect(ms.body).toMatchObject({ endpointing_mode: "fixed", endpointing_ms: 300 });
    const other = await patch(agent.id, { temperature: 0.3 });
    expect(other.body).toMatchObject({ endpointing_mode: "fixed", endpointing_ms: 300 });
  });

  it("refuses an unknown mode on update, naming the field, and leaves the agent alone", async () => {
    const { body: agent } = await create(minimal);
    const res = await patch(agent.id, { endpointing_mode: "eager" });
    expect(res.status).toBe(400);
    const error = errorOf(res);
    expect(error.code).toBe("invalid_request");
    expect(error.details.fields.map((f: { field: string }) => f.field)).toEqual(["endpointing_mode"]);
    expect(error.message).toContain("endpointing_mode");
    const read = await app.request("GET", `/v1/agents/${agent.id}`, { key: acct.key });
    expect(read.body).toEqual(agent);
  });

  it("is in the OpenAPI document with its values", async () => {
    const doc = (await app.request("GET", "/v1/openapi.json")).body;
    const json = (part: { content: { "application/json": { schema: { properties: Record<string, unknown> } } } }) => part.content["application/json"].schema.properties;
    const values = { type: "string", enum: ["adaptive", "fixed"] };
    expect(json(doc.paths["/v1/agents"].post.requestBody).endpointing_mode).toMatchObject(values);
    expect(json(doc.paths["/v1/agents"].post.responses["201"]).endpointing_mode).toMatchObject(values);
    expect(json(doc.paths["/v1/agents/{agent_id}"].patch.requestBody).endpointing_mode).toMatchObject(values);
    expect(json(doc.paths["/v1/agents/{agent_id}"].get.responses["200"]).endpointing_mode).toMatchObject(values);
  });
});

describe("GET /v1/agents", () => {
  let lister: TestAccount;
  const names: string[] = [];

  beforeAll(async () => {
    lister = await app.account();
    for (let i = 0; i < 7; i++) {
      const name = `Agent ${i} ${i % 2 === 0 ? "even" : "odd"}`;
      names.push(name);
      const res = await create({ ...minimal, name }, lister.key);
      expect(res.status).toBe(201);
    }
    const all = await app.request("GET", "/v1/agents?limit=100", { key: lister.key });
    const odd = all.body.data.find((a: { name: string }) => a.name === "Agent 1 odd");
    await app.request("PATCH", `/v1/agents/${odd.id}`, { key: lister.key, body: { status: "inactive" } });
  });

  it("lists items with only the list fields, newest first", async () => {
    const res = await app.request("GET", "/v1/agents", { key: lister.key });
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(7);
    expect(res.body.has_more).toBe(false);
    expect(res.body.next_cursor).toBeNull();
    expect(Object.keys(res.body.data[0]).sort()).toEqual(["created_at", "id", "language", "model", "name", "status", "updated_at", "voice_id"]);
    expect(res.body.data.map((a: { name: string }) => a.name)).toEqual([...names].reverse());
  });

  it("walks every page to the end with the cursor, in both orders", async () => {
    for (const order of ["asc", "desc"] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const qs: string = `limit=3&order=${order}` + (cursor ? `&cursor=${encodeURIComponent(cursor)}` : "");
        const res = await app.request("GET", `/v1/agents?${qs}`, { key: lister.key });
        expect(res.status).toBe(200);
        expect(res.body.total).toBe(7);
        seen.push(...res.body.data.map((a: { name: string }) => a.name));
        cursor = res.body.has_more ? res.body.next_cursor : null;
        if (!res.body.has_more) expect(res.body.next_cursor).toBeNull();
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual(order === "asc" ? names : [...names].reverse());
    }
  });

  it("filters by status and by name search, with total counting the filter", async () => {
    const inactive = await app.request("GET", "/v1/agents?status=inactive", { key: lister.key });
    expect(inactive.body.total).toBe(1);
    expect(inactive.body.data[0].name).toBe("Agent 1 odd");
    const even = await app.request("GET", "/v1/agents?search=EVEN", { key: lister.key });
    expect(even.body.total).toBe(4);
    const wildcard = await app.request("GET", "/v1/agents?search=%25", { key: lister.key });
    expect(wildcard.body.total).toBe(0);
  });

  it("refuses bad parameters and tampered or foreign cursors", async () => {
    const status = await app.request("GET", "/v1/agents?status=sleeping", { key: lister.key });
    expect(status.status).toBe(400);
    expect(errorOf(status).code).toBe("invalid_status");
    for (const limit of ["0", "101", "abc"]) {
      const res = await app.request("GET", `/v1/agents?limit=${limit}`, { key: lister.key });
      expect(res.status).toBe(400);
      expect(errorOf(res).details.fields[0].field).toBe("limit");
    }
    const unknown = await app.request("GET", "/v1/agents?colour=red", { key: lister.key });
    expect(errorOf(unknown).code).toBe("invalid_request");

    const first = await app.request("GET", "/v1/agents?limit=2", { key: lister.key });
    const cursor: string = first.body.next_cursor;
    const [body, sig] = cursor.split(".");
    const payload = JSON.parse(Buffer.from(body!, "base64url").toString());
    payload.i = "agent_zzzzzzzzzzzzzzzzzzzz";
    const forged = Buffer.from(JSON.stringify(payload)).toString("base64url") + "." + sig;
    for (const bad of [forged, "garbage", cursor + "x"]) {
      const res = await app.request("GET", `/v1/agents?limit=2&cursor=${encodeURIComponent(bad)}`, { key: lister.key });
      expect(res.status).toBe(400);
      expect(errorOf(res).code).toBe("invalid_cursor");
    }
    const otherFilter = await app.request("GET", `/v1/agents?limit=2&status=active&cursor=${encodeURIComponent(cursor)}`, { key: lister.key });
    expect(errorOf(otherFilter).code).toBe("invalid_cursor");
    const otherList = await app.request("GET", `/v1/account/ledger?cursor=${encodeURIComponent(cursor)}`, { key: lister.key });
    expect(errorOf(otherList).code).toBe("invalid_cursor");
  });

  it("never shows another account's agents", async () => {
    const other = await app.account();
    const res = await app.request("GET", "/v1/agents", { key: other.key });
    expect(res.body.total).toBe(0);
  });
});

describe("GET, PATCH, DELETE /v1/agents/{id}", () => {
  it("reads an agent, with stats and recent calls when asked", async () => {
    const { body: agent } = await create(minimal);
    const plain = await app.request("GET", `/v1/agents/${agent.id}`, { key: acct.key });
    expect(plain.status).toBe(200);
    expect(plain.body).toEqual(agent);

    const db = app.parley.services.db;
    const row = { account_id: acct.id, agent_id: agent.id };
    await insertCallRow(db, { ...row, id: "call_a", status: "completed", duration: 61, outcome: "information_provided", created_at: "2026-01-01T00:00:01.000Z" });
    await insertCallRow(db, { ...row, id: "call_b", status: "transferred", duration: 30, outcome: "transferred", created_at: "2026-01-01T00:00:02.000Z" });
    await insertCallRow(db, { ...row, id: "call_c", status: "no_answer", duration: null, created_at: "2026-01-01T00:00:03.000Z" });
    await insertCallRow(db, { ...row, id: "call_d", status: "failed", duration: 0, created_at: "2026-01-01T00:00:04.000Z" });

    const withStats = await app.request("GET", `/v1/agents/${agent.id}?include=stats,recent_calls`, { key: acct.key });
    expect(withStats.status).toBe(200);
    expect(withStats.body.stats).toEqual({
      total_calls: 4,
      total_duration_minutes: 3,
      avg_call_duration_seconds: 45.5,
      success_rate: 0.5,
      // Every outcome is listed; calls never connected have none.
      outcomes: {
        appointment_booked: 0,
        information_provided: 1,
        transferred: 1,
        voicemail_left: 0,
        callback_requested: 0,
        do_not_call: 0,
        not_interested: 0,
        no_action: 0,
        appointment_confirmed: 0,
        appointment_cancelled: 0,
        appointment_rescheduled: 0,
      },
    });
    expect(withStats.body.recent_calls.map((c: { id: string }) => c.id)).toEqual(["call_d", "call_c", "call_b", "call_a"]);
    expect(withStats.body.recent_calls[0]).toMatchObject({ status: "failed", duration: 0, agent_id: agent.id });

    const bad = await app.request("GET", `/v1/agents/${agent.id}?include=secrets`, { key: acct.key });
    expect(bad.status).toBe(400);
    expect(errorOf(bad).details.fields[0].field).toBe("include");
  });

  it("updates only the given fields and moves updated_at", async () => {
    const { body: agent } = await create({ ...minimal, first_message: "Hi", metadata: { a: 1 } });
    const res = await app.request("PATCH", `/v1/agents/${agent.id}`, { key: acct.key, body: { temperature: 0.1, first_message: null, status: "inactive" } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...agent, temperature: 0.1, first_message: null, status: "inactive", updated_at: res.body.updated_at });
    expect(res.body.updated_at > agent.updated_at).toBe(true);
    const read = await app.request("GET", `/v1/agents/${agent.id}`, { key: acct.key });
    expect(read.body).toEqual(res.body);

    const badVoice = await app.request("PATCH", `/v1/agents/${agent.id}`, { key: acct.key, body: { voice_id: "nope" } });
    expect(errorOf(badVoice).code).toBe("invalid_voice_id");
    const badStatus = await app.request("PATCH", `/v1/agents/${agent.id}`, { key: acct.key, body: { status: "paused" } });
    expect(errorOf(badStatus).code).toBe("invalid_status");
    const transfer = await app.request("PATCH", `/v1/agents/${agent.id}`, { key: acct.key, body: { transfer_enabled: true } });
    expect(errorOf(transfer).details.fields[0].field).toBe("transfer_number");
  });

  it("answers 404 agent_not_found for unknown ids and 403 unauthorized for another account's", async () => {
    const { body: agent } = await create(minimal);
    const other = await app.account();
    for (const [method, body] of [["GET", undefined], ["PATCH", { name: "x" }], ["DELETE", undefined]] as const) {
      const missing = await app.request(method, "/v1/agents/agent_doesnotexist", { key: acct.key, body });
      expect(missing.status).toBe(404);
      expect(errorOf(missing).code).toBe("agent_not_found");
      const foreign = await app.request(method, `/v1/agents/${agent.id}`, { key: other.key, body });
      expect(foreign.status).toBe(403);
      expect(errorOf(foreign).code).toBe("unauthorized");
    }
    const still = await app.request("GET", `/v1/agents/${agent.id}`, { key: acct.key });
    expect(still.body.name).toBe(minimal.name);
  });

  it("deletes an agent, refusing while it has active calls", async () => {
    const { body: agent } = await create(minimal);
    const db = app.parley.services.db;
    await insertCallRow(db, { id: "call_live", account_id: acct.id, agent_id: agent.id, status: "in_progress" });
    const busy = await app.request("DELETE", `/v1/agents/${agent.id}`, { key: acct.key });
    expect(busy.status).toBe(409);
    expect(errorOf(busy).code).toBe("agent_in_use");

    await db.updateTable("calls").set({ status: "completed", duration: 10 }).where("id", "=", "call_live").execute();
    const res = await app.request("DELETE", `/v1/agents/${agent.id}`, { key: acct.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: agent.id, deleted: true });
    const gone = await app.request("GET", `/v1/agents/${agent.id}`, { key: acct.key });
    expect(gone.status).toBe(404);
    const again = await app.request("DELETE", `/v1/agents/${agent.id}`, { key: acct.key });
    expect(errorOf(again).code).toBe("agent_not_found");
    // The old call still names the agent.
    const call = await db.selectFrom("calls").select("agent_id").where("id", "=", "call_live").executeTakeFirstOrThrow();
    expect(call.agent_id).toBe(agent.id);
  });
});
