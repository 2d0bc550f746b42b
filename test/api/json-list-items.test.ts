import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CARRIERS } from "../../src/config.js";
import { randomBase62 } from "../../src/core/ids.js";
import { toJson } from "../../src/db/repositories/json-column.js";
import { AgentsRepository, type AgentRecord } from "../../src/db/repositories/agents.js";
import { CallsRepository } from "../../src/db/repositories/calls.js";
import { PhoneNumbersRepository, type PhoneNumberRecord } from "../../src/db/repositories/phone-numbers.js";
import { presentAgent } from "../../src/http/presenters/agent.js";
import { presentCallListItem } from "../../src/http/presenters/call.js";
import { presentPhoneNumber } from "../../src/http/presenters/phone-number.js";
import { agentListItemSchema } from "../../src/http/schemas/agents.js";
import { insertCallRow } from "../helpers/call-rows.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

// The agent, call and phone number lists are answered with items that the database writes as
// JSON (src/db/json-object.ts). Whatever a row holds, each page must be, byte for byte, the text
// JSON.stringify makes of the same rows presented by the API's own presenters (the single
// reads'), so a client cannot tell the two apart.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

/**
 * Any UTF-16 code units: quotes, backslashes, controls, U+2028, lone surrogates, astral pairs;
 * all but U+0000, which the API refuses (no PostgreSQL text can hold it).
 */
const anyText = fc.string({ unit: fc.integer({ min: 1, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 24 });
const instant = fc.integer({ min: Date.parse("2000-01-01"), max: Date.parse("2099-12-31") }).map((ms) => new Date(ms).toISOString());
const metadata = fc.dictionary(anyText, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 });

/** The page as the API answers it (raw text), all of it in one page. */
async function page(path: string, key: string): Promise<string> {
  const res = await fetch(`${app.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  return res.text();
}

/** What JSON.stringify makes of a list envelope whose items are `items`, taking the rest from the answer. */
function expectedEnvelope(answered: string, items: unknown[]): string {
  const { has_more, next_cursor, total } = JSON.parse(answered);
  return JSON.stringify({ data: items, has_more, next_cursor, total });
}

/** The rows read back in the list's order (newest first), by id. */
function inListOrder<T extends { id: string }>(answered: string, rows: Map<string, T>): T[] {
  return (JSON.parse(answered).data as Array<{ id: string }>).map((item) => rows.get(item.id)!);
}

describe("list items written by the database", () => {
  it("agents: a page is JSON.stringify of each agent's list fields as a single read presents them", async () => {
    const fields = Object.keys(agentListItemSchema.shape) as Array<keyof ReturnType<typeof presentAgent>>;
    const agentRow = fc.record({ name: anyText, voice_id: anyText, language: anyText, model: anyText, status: fc.constantFrom("active", "inactive"), created_at: instant, updated_at: instant });
    await fc.assert(
      fc.asyncProperty(fc.array(agentRow, { minLength: 1, maxLength: 6 }), async (rows) => {
        const account = await app.account();
        const repository = new AgentsRepository(app.parley.services.db);
        for (const row of rows) {
          const record: AgentRecord = {
            ...row,
            id: "agent_" + randomBase62(20),
            account_id: account.id,
            system_prompt: "p",
            first_message: null,
            temperature: 0.7,
            max_tokens: 150,
            interruption_threshold: 0.5,
            end_call_phrases: [],
            metadata: {},
            transfer_enabled: false,
            transfer_number: null,
            transfer_message: "m",
            transfer_mode: "cold",
            endpointing_mode: "adaptive",
            endpointing_ms: 1500,
            analysis_fields: [],
            tools: [],
            intents: [],
            knowledge_base_ids: [],
            handoffs: [],
            redact: [],
            reminder_minutes_before: null,
            reminder_call: false,
            reminder_call_inbound: false,
            deleted_at: null,
          };
          await repository.insert(record);
        }
        const answered = await page("/v1/agents?limit=100", account.key);
        const stored = new Map<string, AgentRecord>();
        for (const { id } of JSON.parse(answered).data) stored.set(id, (await repository.findById(id))!);
        const items = inListOrder(answered, stored).map((agent) => {
          const presented = presentAgent(agent);
          return Object.fromEntries(fields.map((field) => [field, presented[field]]));
        });
        expect(answered).toBe(expectedEnvelope(answered, items));
      }),
      { numRuns: 30 },
    );
  });

  it("calls: a page is JSON.stringify of presentCallListItem, metadata and all, over pages with a cursor and a count", async () => {
    const callRow = fc.record({
      status: fc.constantFrom("queued", "in_progress", "completed", "failed"),
      direction: fc.constantFrom("outbound", "inbound", "web"),
      phone_number: anyText,
      from_number: fc.option(anyText),
      duration: fc.option(fc.integer({ min: 0, max: 100_000 })),
      metadata: fc.option(metadata),
      created_at: instant,
      ended_at: fc.option(instant),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(callRow, { minLength: 1, maxLength: 6 }), async (rows) => {
        const account = await app.account();
        const agent = await app.request("POST", "/v1/agents", { key: account.key, body: { name: "a", system_prompt: "p", voice_id: "flite-slt" } });
        for (const row of rows) {
          // Metadata stored as JSON's null is listed as {}, as its single read shows it.
          await insertCallRow(app.parley.services.db, { ...row, metadata: toJson(row.metadata), account_id: account.id, agent_id: agent.body.id });
        }
        const repository = new CallsRepository(app.parley.services.db);
        // Two to a page: every page but the last has more after it (a cursor and a counted total).
        let path = "/v1/calls?limit=2";
        for (let pages = 0; pages < 4; pages++) {
          const answered = await page(path, account.key);
          const stored = new Map((await Promise.all(JSON.parse(answered).data.map((item: { id: string }) => repository.findById(item.id)))).map((call) => [call!.id, call!]));
          expect(answered).toBe(expectedEnvelope(answered, inListOrder(answered, stored).map(presentCallListItem)));
          const { next_cursor } = JSON.parse(answered);
          if (next_cursor === null) return;
          path = `/v1/calls?limit=2&cursor=${encodeURIComponent(next_cursor)}`;
        }
      }),
      { numRuns: 30 },
    );
  });

  it("phone numbers: a page is JSON.stringify of presentPhoneNumber, capabilities as booleans, a number without a carrier showing the default", async () => {
    const numberRow = fc.record({
      // Text that spells the stored null carrier must stay as it is: only the key is the default.
      friendly_name: fc.oneof(anyText, fc.constantFrom('"carrier":null', '\\"carrier":null', 'x","carrier":null')),
      carrier: fc.option(fc.constantFrom(...CARRIERS)),
      country: anyText,
      region: fc.option(anyText),
      capabilities: fc.record({ voice: fc.boolean(), sms: fc.boolean() }),
      status: fc.constantFrom("active", "pending", "inactive"),
      created_at: instant,
      updated_at: instant,
    });
    await fc.assert(
      fc.asyncProperty(fc.array(numberRow, { minLength: 1, maxLength: 6 }), async (rows) => {
        const account = await app.account();
        const repository = new PhoneNumbersRepository(app.parley.services.db);
        for (const [i, row] of rows.entries()) {
          const record = { ...row, id: "pn_" + randomBase62(20), account_id: account.id, phone_number: `+1415${randomBase62(6)}${i}`, default_agent_id: null, approved_at: null } as PhoneNumberRecord;
          expect(await repository.insert(record)).toBe(true);
        }
        const answered = await page("/v1/phone-numbers?limit=100", account.key);
        const stored = new Map<string, PhoneNumberRecord>();
        for (const { id } of JSON.parse(answered).data) stored.set(id, (await repository.findById(id))!);
        expect(answered).toBe(expectedEnvelope(answered, inListOrder(answered, stored).map((n) => presentPhoneNumber(n, app.config.carrier))));
      }),
      { numRuns: 30 },
    );
  });
});
