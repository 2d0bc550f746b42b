import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { bodyFields, exampleOf, fillPath, operationsOf, type Operation } from "../helpers/openapi-operations.js";
import { SEED_AGENT, SEED_DESTINATION, seedAccount, type SeededAccount } from "../helpers/seed-resources.js";
import { startTestApp } from "../helpers/test-app.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";

/**
 * The cross-account sweep: account A holds one of every resource; account B, with a key holding
 * every permission, tries each of A's ids on every operation of the OpenAPI document that takes
 * one, in the path, the query or the body. Nothing of A's may be read or written: 403 or 404
 * (a list filtered by A's id answers B's own items only), and the database is unchanged.
 * The operations come from the document, so a new route is swept without changing this file;
 * one whose id this file does not know fails the coverage test.
 */
const app = await startTestApp({}, { PARLEY_WEBHOOK_VERIFY_URL: "0" });
const receiver = await startWebhookReceiver();
const a = await seedAccount(app, receiver.url, 1);
const b = await seedAccount(app, receiver.url, 2);
const operations = operationsOf((await app.request("GET", "/v1/openapi.json")).body);

afterAll(async () => {
  await receiver.close();
  await app.close();
});

/** Which seeded id a parameter or body field of this name takes. */
const ID_OF_FIELD: Record<string, (acct: SeededAccount) => string> = {
  agent_id: (x) => x.ids.agent_id!,
  default_agent_id: (x) => x.ids.agent_id!,
  call_id: (x) => x.ids.call_id!,
  phone_number_id: (x) => x.ids.phone_number_id!,
  webhook_id: (x) => x.ids.webhook_id!,
  delivery_id: (x) => x.ids.delivery_id!,
  event_id: (x) => x.ids.event_id!,
  campaign_id: (x) => x.ids.campaign_id!,
  appointment_id: (x) => x.ids.appointment_id!,
  knowledge_base_id: (x) => x.ids.knowledge_base_id!,
  document_id: (x) => x.ids.document_id!,
  run_id: (x) => x.ids.run_id!,
  audio_id: (x) => x.ids.audio_id!,
  from_number: (x) => x.number,
};
/** Path parameters that name something else than a field of that name elsewhere: the do-not-call entry's number, the secret's name. */
const ID_OF_PATH_PARAM: Record<string, (acct: SeededAccount) => string> = { ...ID_OF_FIELD, phone_number: (x) => x.blocked, name: (x) => x.ids.name! };
/** Fields ending in _id that refer to nothing an account owns (voices are the service's catalog). */
const NOT_REFERENCES = new Set(["voice_id"]);

/** A number no account holds. */
const NOBODYS_NUMBER = "+16505559999";
let serial = 7000;
/** Values that make B's bodies valid: B's own ids, numbers nobody holds. */
const validFor = (acct: SeededAccount) => (name: string): unknown => {
  if (name in ID_OF_FIELD) return ID_OF_FIELD[name]!(acct);
  return {
    name: "Sweep",
    voice_id: SEED_AGENT.voice_id,
    system_prompt: SEED_AGENT.system_prompt,
    phone_number: `+1650555${serial++}`,
    country: "US",
    url: receiver.url,
    events: ["*"],
    secret: "whsec_sweep_0123456789abcdef",
    contacts: [{ phone: SEED_DESTINATION }],
    date: "2030-04-01",
    time: "09:30",
  }[name];
};

/** Every one of A's ids and secrets, to find in an answer that B gets. */
const secretsOfA = () => [...Object.values(a.ids), a.number, a.key, a.secretValue];

/** Path parameter values: A's for the names in `fromA`, B's for the others. */
function pathFor(op: Operation, fromA: ReadonlySet<string>): string {
  return fillPath(op.path, Object.fromEntries(op.pathParams.map((p) => [p, encodeURIComponent(ID_OF_PATH_PARAM[p]!(fromA.has(p) ? a : b))])));
}

/** Required query parameters get a value that is well-formed and means nothing (the recording link's signature). */
function requiredQuery(op: Operation): string {
  const required = op.queryParams.filter((p) => p.required);
  return required.length === 0 ? "" : "?" + required.map((p) => `${p.name}=1`).join("&");
}

/** Operations whose body is a file, not JSON (the document has no JSON schema for it): the file B sends. */
const FILE_BODIES: Record<string, { type: string; text: string }> = { uploadKnowledgeDocument: { type: "text/plain", text: "A sweep document about opening hours." } };

async function send(op: Operation, target: string, body: unknown) {
  const file = FILE_BODIES[op.operationId];
  const options = file ? { rawBody: file.text, headers: { "content-type": file.type } } : body === undefined ? {} : { body };
  const res = await app.request(op.method, target, { key: op.authenticated ? b.key : null, ...options });
  return { ...res, text: JSON.stringify(res.body) };
}

/** Every non-empty subset of `items`. */
function subsets<T>(items: readonly T[]): T[][] {
  return Array.from({ length: 2 ** items.length - 1 }, (_, i) => items.filter((_, bit) => ((i + 1) >> bit) & 1));
}

/**
 * Every row of every table, for comparing before and after: by table and rowid on SQLite; on
 * PostgreSQL (no stable row id: an update moves a row) by table and the row itself, so a
 * changed row shows as one gone and one new.
 */
async function snapshot(): Promise<Map<string, string>> {
  const db = app.parley.services.db;
  const tables = app.onPostgres
    ? await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_name NOT LIKE 'kysely_%'`.execute(db)
    : // Not the full-text index's tables (FTS5's, some WITHOUT ROWID): they follow kb_passages, compared here.
      await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'kysely_%' AND name NOT LIKE 'kb_passages_fts%'`.execute(db);
  const rows = new Map<string, string>();
  for (const { name } of tables.rows) {
    // The node's heartbeat and the request-rate windows change with time and every request, whoever sends it.
    if (name === "nodes" || name === "rate_windows") continue;
    const found = app.onPostgres
      ? await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(name)}`.execute(db)
      : await sql<Record<string, unknown>>`SELECT rowid AS __rowid, * FROM ${sql.table(name)}`.execute(db);
    for (const row of found.rows) {
      // B's key records when it was last used: the only write B's requests may make.
      if (name === "api_keys") delete row.last_used_at;
      const text = JSON.stringify(row);
      rows.set(`${name}#${app.onPostgres ? text : String(row.__rowid)}`, text);
    }
  }
  return rows;
}

/** What the sweep sent, for the coverage test. */
const swept = { pathOperations: new Set<string>(), fields: new Set<string>() };
/** Checks one answer B got with A's id in it: refused (403/404), or, for a list filter, only B's own items. */
function judge(refusals: string[], what: string, op: Operation, res: { status: number; text: string }, exposedIds: string[], allowList: boolean) {
  const leaked = exposedIds.filter((id) => res.text.includes(id));
  if (allowList && res.status === 200 && leaked.length === 0) return;
  if ((res.status === 403 || res.status === 404) && leaked.length === 0) return;
  refusals.push(`${what}: ${op.method} ${op.path} answered ${res.status}${leaked.length ? ` and showed A's ${leaked.join(", ")}` : ""}: ${res.text.slice(0, 300)}`);
}

describe("cross-account sweep: B's key on A's ids", () => {
  let before: Map<string, string>;

  it("seeds two accounts with one of everything, and the sweep knows every id the document takes", async () => {
    before = await snapshot();
    const unknownPath = operations.flatMap((op) => op.pathParams.filter((p) => !(p in ID_OF_PATH_PARAM)).map((p) => `${op.operationId} path parameter ${p}`));
    const unknownFields = operations.flatMap((op) => [
      ...op.queryParams.filter((q) => q.name.endsWith("_id") && !NOT_REFERENCES.has(q.name) && !(q.name in ID_OF_FIELD)).map((q) => `${op.operationId} query parameter ${q.name}`),
      ...(op.body ? bodyFields(op.body) : []).map((f) => f.path.at(-1)!).filter((n) => n.endsWith("_id") && !NOT_REFERENCES.has(n) && !(n in ID_OF_FIELD)).map((n) => `${op.operationId} body field ${n}`),
    ]);
    expect([...unknownPath, ...unknownFields], "ids the sweep has no seeded value for: seed one in test/helpers/seed-resources.ts").toEqual([]);
    for (const acct of [a, b]) expect(Object.keys(acct.ids).sort()).toEqual(Object.keys(ID_OF_PATH_PARAM).filter((k) => k !== "default_agent_id" && k !== "from_number").sort());
  });

  it("refuses A's ids in every path, alone and mixed with B's own ids (403/404, nothing of A's shown)", async () => {
    const refusals: string[] = [];
    for (const op of operations.filter((o) => o.pathParams.length > 0)) {
      const body = op.body ? exampleOf(op.body, validFor(b)) : undefined;
      for (const fromA of subsets(op.pathParams)) {
        const res = await send(op, pathFor(op, new Set(fromA)) + requiredQuery(op), body);
        // The ids B asked for are A's: an error may repeat them, nothing else of A's.
        const asked = fromA.map((p) => ID_OF_PATH_PARAM[p]!(a));
        judge(refusals, `A's ${fromA.join(" and ")}`, op, res, secretsOfA().filter((s) => !asked.includes(s)), false);
      }
      swept.pathOperations.add(op.operationId);
    }
    expect(refusals).toEqual([]);
  });

  it("shows none of A's in B's lists, refuses A's ids in query filters and bodies: a filter lists none of A's, a body referring to A's resource is refused", async () => {
    const refusals: string[] = [];
    for (const op of operations) {
      const path = pathFor(op, new Set());
      if (op.method === "GET" && op.authenticated && !op.queryParams.some((q) => q.required)) {
        // B's own lists and reads, unfiltered: nothing of A's in them.
        judge(refusals, "B's own", op, await send(op, path, undefined), secretsOfA(), true);
      }
      for (const q of op.queryParams.filter((p) => p.name in ID_OF_FIELD)) {
        const res = await send(op, `${path}?${q.name}=${encodeURIComponent(ID_OF_FIELD[q.name]!(a))}`, undefined);
        judge(refusals, `query ${q.name}=A's`, op, res, secretsOfA().filter((s) => s !== ID_OF_FIELD[q.name]!(a)), true);
        swept.fields.add(`${op.operationId} query ${q.name}`);
      }
      for (const field of op.body ? bodyFields(op.body).filter((f) => f.path.at(-1)! in ID_OF_FIELD) : []) {
        const name = field.path.at(-1)!;
        const body = structuredClone(exampleOf(op.body!, validFor(b))) as Record<string, any>;
        let at = body;
        for (const key of field.path.slice(0, -1)) at = at[key] ??= {};
        at[name] = ID_OF_FIELD[name]!(a);
        const res = await send(op, path, body);
        if (name === "from_number") {
          // A number is refused as 400 invalid_from_number whether it is another account's or nobody's: the same answer tells nothing.
          at[name] = NOBODYS_NUMBER;
          const nobodys = await send(op, path, body);
          const alike = res.status === 400 && res.body.error.code === "invalid_from_number" && res.text.replaceAll(a.number, NOBODYS_NUMBER).replace(/req_\w+/g, "") === nobodys.text.replace(/req_\w+/g, "");
          if (!alike) refusals.push(`body ${field.path.join(".")}=A's: ${op.method} ${op.path} answered ${res.status} ${res.text.slice(0, 300)}, for nobody's number ${nobodys.status} ${nobodys.text.slice(0, 300)}`);
        } else {
          judge(refusals, `body ${field.path.join(".")}=A's`, op, res, secretsOfA().filter((s) => s !== ID_OF_FIELD[name]!(a)), false);
        }
        swept.fields.add(`${op.operationId} body ${field.path.join(".")}`);
      }
    }
    expect(refusals).toEqual([]);
  });

  it("left every row as it was: nothing of A's read into a write, nothing created", async () => {
    const after = await snapshot();
    const changed = [...before].filter(([k, v]) => after.get(k) !== v).map(([k]) => `changed or removed: ${k}`);
    const added = [...after.keys()].filter((k) => !before.has(k)).map((k) => `added: ${k} ${after.get(k)!.slice(0, 200)}`);
    expect([...changed, ...added]).toEqual([]);
  });

  it("covered every operation with an id in its path, and the id fields of queries and bodies", () => {
    const withPathIds = operations.filter((o) => o.pathParams.length > 0).map((o) => o.operationId);
    expect(withPathIds.length).toBeGreaterThan(25);
    expect(withPathIds.filter((id) => !swept.pathOperations.has(id))).toEqual([]);
    // The ones known today, so a filter or field dropped from the document is noticed too.
    expect([...swept.fields].sort()).toEqual(
      expect.arrayContaining([
        "createCall body agent_id",
        "createCall body from_number",
        "createWebCall body agent_id",
        "createCampaign body agent_id",
        "createCampaign body settings.from_number",
        "createPhoneNumber body default_agent_id",
        "updatePhoneNumber body default_agent_id",
        "listCalls query agent_id",
        "listEvents query call_id",
        "listAppointments query call_id",
        "listWebhookDeliveries query call_id",
      ]),
    );
  });

  it("the same requests with B's own ids are well-formed and reach B's resources (the refusals above are about ownership)", async () => {
    // Run after the snapshot comparison: these may change B's own rows (pause, end, delete...).
    // Deletes last, a child (more path parameters: a knowledge base's document) before its parent.
    const deletes = (o: Operation) => (o.method === "DELETE" ? 1 + 1 / (1 + o.pathParams.length) : 0);
    const ordered = [...operations].filter((o) => o.pathParams.length > 0 && o.authenticated).sort((x, y) => deletes(x) - deletes(y));
    const wrong: string[] = [];
    for (const op of ordered) {
      const body = op.body ? exampleOf(op.body, validFor(b)) : undefined;
      const res = await send(op, pathFor(op, new Set()) + requiredQuery(op), body);
      // 2xx, or 409 where the resource's state forbids the change (resume a campaign that is not paused).
      if (!(res.status < 300 || res.status === 409)) wrong.push(`${op.method} ${op.path}: ${res.status} ${res.text.slice(0, 200)}`);
    }
    expect(wrong).toEqual([]);
  });
});
