import { encodeWav } from "../../engine/audio/wav.js";
import { TestRunsRepository } from "../../src/db/repositories/test-runs.js";
import type { TestAccount, TestApp } from "./test-app.js";

/** An account holding one of every resource, with the ids the API's paths and bodies take. */
export interface SeededAccount extends TestAccount {
  /** Ids by the name of the path parameter (or body field) that takes them: agent_id, call_id, ... */
  ids: Record<string, string>;
  /** The account's active phone number, E.164 (from_number). */
  number: string;
  /** The do-not-call entry's number (the path parameter of /v1/do-not-call/{phone_number}). */
  blocked: string;
  /** The value of the account's secret (named `ids.name`): write-only, so no answer may hold it. */
  secretValue: string;
}

export const SEED_AGENT = { name: "Seeded agent", system_prompt: "You confirm appointments.", voice_id: "flite-slt" };
/** Where seeded calls and campaigns would dial: the simulator carrier answers for it, nothing leaves the machine. */
export const SEED_DESTINATION = "+14155550123";

async function ok(app: TestApp, what: string, method: string, path: string, key: string, body?: unknown): Promise<any> {
  const res = await app.request(method, path, { key, ...(body === undefined ? {} : { body }) });
  if (res.status >= 300) throw new Error(`seeding ${what}: ${method} ${path} answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > end) throw new Error(`seeding: timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * A new account (agency plan, every permission) with an agent, an approved phone number, an
 * ended call, a webhook to `receiverUrl` with a delivered delivery, a campaign scheduled far
 * in the future (the runner leaves it alone), an appointment, a do-not-call entry and its
 * events, a secret, a knowledge base with a document, a finished test run and a test audio clip; returns once the webhook has delivered everything so far, so the account is quiet.
 * `serial` makes its phone numbers unique (numbers are unique across accounts).
 */
export async function seedAccount(app: TestApp, receiverUrl: string, serial: number): Promise<SeededAccount> {
  const account = await app.account({ plan: "agency", credits: 100_000 });
  const { key } = account;
  const number = `+1650555${String(serial).padStart(4, "0")}`;
  const blocked = `+1415555${String(serial).padStart(4, "0")}`;

  const webhook = await ok(app, "webhook", "POST", "/v1/webhooks", key, { url: receiverUrl, events: ["*"], secret: "whsec_seeded_0123456789abcdef" });
  const agent = await ok(app, "agent", "POST", "/v1/agents", key, SEED_AGENT);
  const phone = await app.activeNumber(key, { phone_number: number, country: "US", default_agent_id: agent.id });
  const call = await ok(app, "call", "POST", "/v1/calls", key, { agent_id: agent.id, phone_number: SEED_DESTINATION, from_number: number });
  await ok(app, "end of the call", "POST", `/v1/calls/${call.id}/end`, key);
  const campaign = await ok(app, "campaign", "POST", "/v1/campaigns", key, {
    name: "Seeded campaign",
    agent_id: agent.id,
    contacts: [{ phone: SEED_DESTINATION }],
    settings: { schedule: "2099-01-01T09:00:00Z", from_number: number },
  });
  const appointment = await app.parley.services.appointments.create({ account_id: account.id, call_id: call.id, date: "2030-03-01", time: "10:30", customer_name: "Seeded" });
  await ok(app, "do-not-call entry", "POST", "/v1/do-not-call", key, { phone_number: blocked });
  const secret = { name: `SEEDED_SECRET_${serial}`, value: `seeded-secret-value-${serial}-${account.id}` };
  await ok(app, "secret", "POST", "/v1/secrets", key, secret);
  const knowledgeBase = await ok(app, "knowledge base", "POST", "/v1/knowledge-bases", key, { name: "Seeded knowledge" });
  const upload = await app.request("POST", `/v1/knowledge-bases/${knowledgeBase.id}/documents?name=seeded.txt`, { key, rawBody: "Parking is free behind the seeded clinic.", headers: { "content-type": "text/plain" } });
  if (upload.status !== 201) throw new Error(`seeding a knowledge document: answered ${upload.status} ${JSON.stringify(upload.body)}`);

  // A finished test run of the agent, stored as its runner would leave it (this app runs no engine to carry one out).
  const testRun = `testrun_seeded${serial}`;
  await new TestRunsRepository(app.parley.services.db).insert({
    id: testRun,
    account_id: account.id,
    agent_id: agent.id,
    status: "passed",
    scenarios: JSON.stringify([{ name: "seeded", caller: { lines: ["hello"], voice: "flite-rms", pause_ms: 800, noise_db: null, barge_in: [] }, expect: {} }]),
    scenario_count: 1,
    results: JSON.stringify([{ name: "seeded", status: "passed", error: null, transcript: [], turns: [], outcome: "no_action", expectations: [] }]),
    error: null,
    node_id: null,
    created_at: new Date().toISOString(),
    completed_at: new Date().toISOString(),
  });

  // A test audio clip (a second of silence at 8 kHz) its test runs' callers could play.
  const clip = await app.request("POST", "/v1/test-audio?name=seeded.wav", { key, rawBody: encodeWav({ sampleRate: 8000, channels: 1, samples: new Int16Array(8000) }), headers: { "content-type": "audio/wav" } });
  if (clip.status !== 201) throw new Error(`seeding test audio: answered ${clip.status} ${JSON.stringify(clip.body)}`);

  const event = (await ok(app, "events", "GET", "/v1/events?limit=1", key)).data[0];
  const deliveries = `/v1/webhooks/${webhook.id}/deliveries?limit=100`;
  const total = Number((await ok(app, "event count", "GET", "/v1/events?limit=100", key)).data.length);
  const delivered = await until(
    "every event delivered",
    async () => (await ok(app, "deliveries", "GET", deliveries, key)).data as Array<{ id: string; status: string }>,
    (d) => d.length >= total && d.every((x) => x.status === "delivered"),
  );
  return {
    ...account,
    number,
    blocked,
    secretValue: secret.value,
    ids: {
      agent_id: agent.id,
      phone_number_id: phone.id,
      call_id: call.id,
      webhook_id: webhook.id,
      delivery_id: delivered[0]!.id,
      event_id: event.id,
      campaign_id: campaign.id,
      appointment_id: appointment.id,
      phone_number: blocked,
      name: secret.name,
      knowledge_base_id: knowledgeBase.id,
      document_id: upload.body.id,
      run_id: testRun,
      audio_id: clip.body.id,
    },
  };
}
