import type { TestAccount, TestApp } from "./test-app.js";
import { untilValue } from "./until.js";

/** What the carrier tests' front desk says first. */
export const CARRIER_GREETING = "Thanks for calling Acme Dental.";

/**
 * The agents of a carrier test: a front desk answering `answering` (its id returned, for
 * outbound calls too), and a desk answering `transferring` that transfers a caller asking for a
 * person to `desk`.
 */
export async function carrierTestAgents(app: TestApp, acct: TestAccount, numbers: { answering: string; transferring: string; desk: string }): Promise<string> {
  const prompt = "You answer calls for Acme Dental.";
  const agent = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Front desk", system_prompt: prompt, voice_id: "flite-kal", first_message: CARRIER_GREETING } });
  const desk = await app.request("POST", "/v1/agents", {
    key: acct.key,
    body: { name: "Desk", system_prompt: prompt, voice_id: "flite-kal", first_message: "Acme Dental, how can I help?", transfer_enabled: true, transfer_number: numbers.desk, transfer_message: "Please hold while I transfer you." },
  });
  await app.activeNumber(acct.key, { phone_number: numbers.answering, country: "US", default_agent_id: agent.body.id });
  await app.activeNumber(acct.key, { phone_number: numbers.transferring, country: "US", default_agent_id: desk.body.id });
  return agent.body.id as string;
}

/** The call once it has ended, with its transcript. */
export function endedCall(app: TestApp, acct: TestAccount, callId: string): Promise<any> {
  return untilValue(`call ${callId} ended`, async () => {
    const res = await app.request("GET", `/v1/calls/${callId}?include=transcript`, { key: acct.key });
    return ["queued", "ringing", "in_progress"].includes(res.body.status) ? undefined : res.body;
  });
}
