import { z } from "zod";
import { SUPERVISOR_TEXT_MAX_CHARS } from "../../../engine/index.js";
import { LISTEN_MODES } from "../../services/call-supervision.js";

const supervisorText = z
  .string({ error: "must be a string" })
  .trim()
  .min(1, { message: `must be 1 to ${SUPERVISOR_TEXT_MAX_CHARS} characters` })
  .max(SUPERVISOR_TEXT_MAX_CHARS, { message: `must be 1 to ${SUPERVISOR_TEXT_MAX_CHARS} characters` });

export const sayBody = z.object({ text: supervisorText.describe("What the agent says next, in its voice; it is in the transcript as the agent's") }).strict();
export const whisperBody = z.object({ text: supervisorText.describe("Guidance for the agent's next replies, never spoken (a chat model follows it; the rules dialogue cannot)") }).strict();
export const handBackBody = z.object({}).strict();
export const listenTokenBody = z
  .object({ mode: z.enum(LISTEN_MODES, { error: `must be one of ${LISTEN_MODES.join(", ")}` }).default("listen").describe("listen (calls:read), or takeover: the socket's audio replaces the agent's (calls:write)") })
  .strict();

export const supervisorActionSchema = z.object({
  call_id: z.string(),
  action: z.enum(["say", "whisper", "hand_back"]),
  status: z.literal("accepted").describe("handed to the node running the call: carried out when the agent can (say: its next turn)"),
});

export const listenTokenSchema = z.object({
  token: z.string().describe("single use, within expires_at"),
  call_id: z.string(),
  mode: z.enum(LISTEN_MODES),
  expires_at: z.string(),
  url: z.string().describe("path and query of the WebSocket to open on the node running the call"),
});
