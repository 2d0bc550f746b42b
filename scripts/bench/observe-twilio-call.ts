import type { TwilioMediaClient } from "./media-caller.js";
import type { ObservedCall } from "./play-conversation.js";
import type { RestClient } from "./rest-client.js";

/** How long the service may take to store a call's end after its stream closed. */
const STORED_TIMEOUT_MS = 5000;
const ENDED = new Set(["completed", "transferred", "failed", "no_answer", "busy"]);

/**
 * A Twilio stream carries audio and `clear` only, so what the call did is read back the way an
 * integrator would: the call row (found by the stream's call SID, which the service keeps in
 * the call's metadata) with its transcript and per-turn latency (whose `interrupted` says an
 * agent turn was cut short: a `clear` alone need not be an interruption), and the appointments
 * booked on it. The end reason is the close reason the service gives the stream when it ends
 * the call.
 */
export async function observeTwilioCall(api: RestClient, agentId: string, client: TwilioMediaClient): Promise<ObservedCall> {
  const call = await findEndedCall(api, agentId, client.callSid);
  const full = await api("GET", `/v1/calls/${call.id}?include=transcript,latency`);
  const transcript: Array<{ role: string; content: string }> = full.transcript ?? [];
  const turns: Array<{ interrupted: boolean }> | undefined = full.latency?.turns;
  const appointments = (await api("GET", `/v1/appointments?call_id=${call.id}&limit=100`)).data as Array<Record<string, unknown>>;
  return {
    agentText: transcript
      .filter((s) => s.role === "agent")
      .map((s) => s.content.toLowerCase())
      .join(" "),
    userTurns: transcript.filter((s) => s.role === "user").length,
    // Without stored turns (none were measured), a `clear` is the only sign there is.
    interrupted: turns ? turns.some((t) => t.interrupted) : client.messages.some((m) => m.message.event === "clear"),
    endReason: call.status === "transferred" ? "transferred" : client.closeReason || null,
    toolCalls: appointments.map((a) => ({
      name: "book_appointment",
      arguments: { customer_name: a.customer_name, date: a.date, time: a.time, service: a.service },
    })),
  };
}

async function findEndedCall(api: RestClient, agentId: string, callSid: string): Promise<{ id: string; status: string }> {
  const deadline = Date.now() + STORED_TIMEOUT_MS;
  for (;;) {
    let cursor: string | null = null;
    do {
      const page: any = await api("GET", `/v1/calls?agent_id=${agentId}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      const hit = (page.data as Array<{ id: string; status: string; metadata: Record<string, unknown> }>).find((c) => c.metadata.twilio_call_sid === callSid);
      if (hit && ENDED.has(hit.status)) return hit;
      cursor = page.has_more ? page.next_cursor : null;
    } while (cursor);
    if (Date.now() > deadline) throw new Error(`no ended call with twilio_call_sid ${callSid}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
