import { isIP } from "node:net";
import fc from "fast-check";
import { sql } from "kysely";
import { pino } from "pino";
import { request } from "undici";
import { afterAll, describe, expect, it } from "vitest";
import { fuzzRequest, type FuzzContext, type FuzzRequest } from "../helpers/fuzz-requests.js";
import { schemaProblems } from "../helpers/json-schema-check.js";
import { operationsOf, type Operation } from "../helpers/openapi-operations.js";
import { SEED_AGENT, SEED_DESTINATION, seedAccount } from "../helpers/seed-resources.js";
import { startTestApp } from "../helpers/test-app.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";

/**
 * Property-based fuzz of every operation of the OpenAPI document, over real HTTP against the
 * service in-process with a real SQLite file. Whatever is sent: no 5xx, no hang, every error
 * in the envelope (400s naming the field), every success with the declared status and shape.
 * FUZZ_SEED changes the seed (a fixed one by default, so CI is reproducible); FUZZ_RUNS the
 * runs per operation.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_116);
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
/** A request still unanswered after this long is a hang. */
const REQUEST_TIMEOUT_MS = 15_000;

// Error lines the service logs, to say why a request got a 500.
const errorLines: any[] = [];
const logger = pino({ level: "error" }, { write: (line: string) => void errorLines.push(JSON.parse(line)) });
// Webhook URLs are not probed when stored (PARLEY_WEBHOOK_VERIFY_URL=0) and every host name
// resolves to 127.0.0.1 (the test app's resolver); bodies naming an address literal outside
// loopback are skipped below, so no request of this file makes the service connect off the machine.
// The simulator carrier places the calls. Plan limits are raised so the fuzz reaches the handlers.
const app = await startTestApp({}, {
  PARLEY_WEBHOOK_VERIFY_URL: "0",
  PARLEY_PLAN_AGENCY_REQUESTS_PER_MINUTE: "1000000",
  PARLEY_PLAN_AGENCY_AGENTS: "100000",
  PARLEY_PLAN_AGENCY_WEBHOOKS: "100000",
  PARLEY_PLAN_AGENCY_QUEUED_CALLS: "100000",
  PARLEY_PLAN_AGENCY_CONCURRENT_CALLS: "1000",
}, logger);
const receiver = await startWebhookReceiver();
const seeded = await seedAccount(app, receiver.url, 1);
const doc = (await app.request("GET", "/v1/openapi.json")).body;
const errorSchema = doc.components.schemas.Error;
// Destructive operations last, so the others meet the seeded resources alive.
const operations = operationsOf(doc).sort((a, b) => Number(a.method === "DELETE") - Number(b.method === "DELETE"));

afterAll(async () => {
  await receiver.close();
  await app.close();
});

let fresh = 5000;
const HINTS: Record<string, () => unknown> = {
  name: () => "Fuzzed",
  voice_id: () => SEED_AGENT.voice_id,
  system_prompt: () => SEED_AGENT.system_prompt,
  agent_id: () => seeded.ids.agent_id,
  default_agent_id: () => seeded.ids.agent_id,
  phone_number: () => `+1650555${fresh++}`,
  from_number: () => seeded.number,
  country: () => "US",
  url: () => receiver.url,
  webhook_url: () => receiver.url,
  events: () => ["*"],
  secret: () => "whsec_fuzz_0123456789abcdef",
  phone: () => SEED_DESTINATION,
  date: () => "2030-03-02",
  time: () => "11:00",
  start: () => "09:00",
  end: () => "17:00",
};

const ctx: FuzzContext = {
  realIds: seeded.ids,
  prefixes: { ...Object.fromEntries(Object.entries(seeded.ids).map(([name, id]) => [name, id.replace(/[^_]*$/, "")])), phone_number: "+1415555" },
  hints: (name) => HINTS[name]?.(),
  authorization: `Bearer ${seeded.key}`,
  bodyLimitBytes: app.config.bodyLimitBytes,
};

/** Every string inside a JSON value, keys included (iteratively: bodies nest thousands deep). */
function stringsOf(root: unknown): string[] {
  const out: string[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === "string") out.push(value);
    else if (Array.isArray(value)) stack.push(...value);
    else if (value && typeof value === "object") {
      out.push(...Object.keys(value));
      stack.push(...Object.values(value));
    }
  }
  return out;
}

/** Whether the body names an http(s) URL whose host is an address literal off loopback: the one way a webhook could leave the machine. */
function namesOffMachineAddress(body: FuzzRequest["body"]): boolean {
  if (typeof body !== "string") return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return false;
  }
  return stringsOf(parsed).some((s) => {
    if (!URL.canParse(s.trim())) return false;
    const url = new URL(s.trim());
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    return /^https?:$/.test(url.protocol) && isIP(host) !== 0 && !host.startsWith("127.") && host !== "::1";
  });
}

function describeRequest(req: FuzzRequest): string {
  const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, v.length > 80 ? `${v.slice(0, 80)}... (${v.length} chars)` : v]));
  const target = req.target.length > 300 ? `${req.target.slice(0, 300)}... (${req.target.length} chars)` : req.target;
  const body = typeof req.body === "string" && req.body.length <= 300 ? ` ${JSON.stringify(req.body)}` : "";
  return `${req.method} ${target} headers=${JSON.stringify(headers)} body: ${req.bodyKind}${body}`;
}

/** What is wrong with the answer to `req`, if anything. */
function problemsOf(op: Operation, status: number, contentType: string, text: string): string[] {
  if (status >= 500) {
    const requestId = /"request_id":"([^"]+)"/.exec(text)?.[1];
    const logged = errorLines.find((l) => (l.request_id ?? l.requestId) === requestId);
    return [`status ${status}: ${text.slice(0, 300)}; logged: ${logged ? `${logged.msg}: ${logged.err?.message}\n${logged.err?.stack ?? ""}` : "nothing"}`];
  }
  if (status < 300) {
    if (!op.statuses.includes(status)) return [`success status ${status} is not one the document declares (${op.statuses.join(", ")})`];
    if (!contentType.startsWith(op.success.mediaType)) return [`success answered as ${contentType}, the document says ${op.success.mediaType}`];
    if (op.success.mediaType !== "application/json") return [];
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return [`success body is not JSON: ${text.slice(0, 200)}`];
    }
    return schemaProblems(op.success.schema, body).slice(0, 5).map((p) => `success body differs from the document: ${p}`);
  }
  if (!contentType.startsWith("application/json")) return [`error answered as ${contentType || "(no type)"}: ${text.slice(0, 200)}`];
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return [`error body is not JSON: ${text.slice(0, 200)}`];
  }
  const problems = schemaProblems(errorSchema, body).map((p) => `error envelope: ${p}`);
  if (problems.length > 0) return problems;
  const { code, message, details } = body.error;
  if (!code || !message) problems.push(`error without a code or message: ${text.slice(0, 200)}`);
  if (status === 400 && code !== "invalid_json") {
    const fields = details?.fields;
    if (!Array.isArray(fields) || fields.length === 0 || !fields.every((f: any) => typeof f?.field === "string" && typeof f?.message === "string")) {
      problems.push(`400 ${code} without details.fields naming the field: ${text.slice(0, 300)}`);
    } else if (!fields.some((f: { field: string }) => message.startsWith(f.field))) {
      problems.push(`400 ${code} message does not start with one of its fields (${fields.map((f: { field: string }) => f.field).join(", ")}): ${message}`);
    }
  }
  return problems;
}

/** A stable number per operation, so each has its own reproducible stream from the one seed. */
const seedOf = (op: Operation) => [...op.operationId].reduce((h, c) => (h * 31 + c.charCodeAt(0)) | 0, SEED);

let sent = 0;
/** Answers by operation, status and error code: FUZZ_HISTOGRAM=1 prints them (how much of each operation the fuzz reached). */
const histogram = new Map<string, number>();
afterAll(() => {
  if (process.env.FUZZ_HISTOGRAM) console.log([...histogram].sort().map(([k, v]) => `${k}: ${v}`).join("\n"));
});

describe("fuzz: every operation of the OpenAPI document", () => {
  it("covers every operation the document lists", () => {
    expect(operations.length).toBeGreaterThan(40);
    expect(new Set(operations.map((o) => o.operationId)).size).toBe(operations.length);
  });

  for (const op of operations) {
    it(`${op.operationId}: ${op.method} ${op.path}`, { timeout: 120_000 }, async () => {
      const run = await fc.check(
        fc.asyncProperty(fuzzRequest(op, ctx), async (req) => {
          fc.pre(!req.oversized && !namesOffMachineAddress(req.body));
          sent++;
          let status: number;
          let contentType: string;
          let text: string;
          try {
            // undici's request, not fetch: fetch refuses a body on GET, which a client may still send.
            const res = await request(app.baseUrl + req.target, { method: req.method as "GET", headers: req.headers, body: req.body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
            status = res.statusCode;
            contentType = String(res.headers["content-type"] ?? "");
            text = await res.body.text();
          } catch (err) {
            throw new Error(`no answer (${(err as Error).name}: ${(err as Error).message}) to ${describeRequest(req)}`);
          }
          const problems = problemsOf(op, status, contentType, text);
          const key = `${op.operationId} ${status}${status >= 300 ? " " + (/"code":"([^"]+)"/.exec(text)?.[1] ?? "") : ""}`;
          histogram.set(key, (histogram.get(key) ?? 0) + 1);
          if (problems.length > 0) throw new Error(`${problems.join("; ")}\n  request: ${describeRequest(req)}`);
        }),
        { seed: seedOf(op), numRuns: RUNS, endOnFailure: true },
      );
      // Our own message: fast-check's would print the whole request, megabytes of body included.
      if (run.failed) {
        const error = (run as { errorInstance?: unknown }).errorInstance;
        throw new Error(`${error instanceof Error ? error.message : String(error)}\n  (FUZZ_SEED=${SEED}, run ${run.numRuns})`);
      }
    });
  }

  it("sent thousands of requests, reached most operations' success, and no webhook stored points off the machine", async () => {
    expect(sent).toBeGreaterThanOrEqual(operations.length * RUNS * 0.9);
    // Not only refusals: most operations answered a success at least once (the rest need a state the fuzz rarely makes).
    const succeeded = new Set([...histogram.keys()].filter((k) => / 2\d\d$/.test(k)).map((k) => k.split(" ")[0]));
    expect(succeeded.size, `operations that never succeeded: ${operations.map((o) => o.operationId).filter((id) => !succeeded.has(id)).join(", ")}`).toBeGreaterThanOrEqual(operations.length * 0.75);
    const urls = await sql<{ url: string }>`SELECT url FROM webhooks UNION ALL SELECT webhook_url AS url FROM calls WHERE webhook_url IS NOT NULL`.execute(app.parley.services.db);
    for (const { url } of urls.rows) {
      const host = new URL(url).hostname.replace(/^\[(.*)\]$/, "$1");
      expect(isIP(host) === 0 || host.startsWith("127.") || host === "::1", url).toBe(true);
    }
    expect(app.config.carrier).toBe("simulator");
  });
});
