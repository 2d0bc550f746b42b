import type { ToolResult } from "../../engine/tools.js";
import type { AgentTool } from "../db/repositories/agents.js";
import { argumentsChecker, isReservedHeader, SECRET_REFERENCE, secretNamesOf, TOOL_HEADERS } from "../services/http-tool-rules.js";
import type { WebhookSender } from "../services/webhook-sender.js";
import { webhookSignature } from "../services/webhook-signature.js";

/** An agent's custom HTTP tool as stored on the agent (validated when it was saved). */
export type HttpTool = AgentTool;

export interface HttpToolDeps {
  /** src/services/webhook-sender.ts: its lookup refuses addresses webhooks may not reach. */
  sender: Pick<WebhookSender, "send">;
  /** WebhookTargets.checkForAttempt: throws with the reason. */
  checkTarget(url: string): URL;
  /** The values of those of `names` that exist in the call's account. */
  secrets(names: readonly string[]): Promise<Map<string, string>>;
  /** Milliseconds since the epoch (the signature's timestamp). */
  now(): number;
}

/** Header values that would split or end the request's header block. */
const HEADER_BREAK = /[\r\n\0]/;

/** Replaces every value of `secrets` in `text` by its reference, so no error text carries one. */
function scrub(text: string, secrets: ReadonlyMap<string, string>): string {
  let out = text;
  for (const [name, value] of secrets) if (value) out = out.split(value).join(`{{secrets.${name}}}`);
  return out;
}

/** `value` with every string scrubbed of the secrets' values (see scrub). */
function scrubStrings(value: unknown, secrets: ReadonlyMap<string, string>): unknown {
  if (typeof value === "string") return scrub(value, secrets);
  if (Array.isArray(value)) return value.map((item) => scrubStrings(item, secrets));
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [scrub(key, secrets), scrubStrings(item, secrets)]));
  return value;
}

/** Calls the tool once; never throws for the tool's own failure: that is {ok:false, error} in words the agent can say. */
export async function callHttpTool(tool: HttpTool, args: Record<string, unknown>, context: { callId: string; agentId: string }, deps: HttpToolDeps): Promise<ToolResult> {
  const failed = (why: string): ToolResult => ({ ok: false, error: `the ${tool.name} tool failed: ${why}` });

  let problem: string | null;
  try {
    problem = argumentsChecker(tool.parameters)(args);
  } catch (err) {
    return failed(`its parameter schema is not usable (${(err as Error).message}); no request was sent`);
  }
  if (problem) return failed(`${problem}; no request was sent`);

  const names = secretNamesOf(tool);
  let secrets: Map<string, string>;
  try {
    secrets = await deps.secrets(names);
  } catch {
    return failed("its secrets could not be read; no request was sent");
  }
  const missing = names.filter((n) => !secrets.has(n));
  if (missing.length > 0) return failed(`the account has no secret named ${missing.join(", ")}; no request was sent`);

  let url: URL;
  try {
    url = deps.checkTarget(tool.url);
  } catch (err) {
    return failed(`its URL may not be called (${scrub((err as Error).message, secrets)}); no request was sent`);
  }

  const headers: Record<string, string> = {};
  for (const [name, template] of Object.entries(tool.headers)) {
    if (isReservedHeader(name)) continue;
    const value = template.replace(SECRET_REFERENCE, (_, secret: string) => secrets.get(secret)!);
    // Only a secret's value can bring a line break in (saved values are validated); say which header, never the value.
    if (HEADER_BREAK.test(value)) return failed(`its header ${name} would hold a line break (from a secret's value); no request was sent`);
    headers[name] = value;
  }
  const body = JSON.stringify({ tool: tool.name, arguments: args, call_id: context.callId, agent_id: context.agentId });
  headers[TOOL_HEADERS.signature] = webhookSignature(secrets.get(tool.signing_secret)!, body, Math.floor(deps.now() / 1000));
  headers[TOOL_HEADERS.tool] = tool.name;

  let outcome: Awaited<ReturnType<HttpToolDeps["sender"]["send"]>>;
  try {
    outcome = await deps.sender.send(url, body, headers, { timeoutMs: tool.timeout_ms });
  } catch (err) {
    return failed(`the request could not be made (${scrub((err as Error).message, secrets)})`);
  }
  const status = outcome.statusCode;
  if (status === null) return failed(`no answer came (${scrub(outcome.error ?? "unknown error", secrets)})`);
  if (status >= 300 && status < 400) return failed(`its URL answered with a redirect (HTTP ${status}), and redirects are not followed`);
  if (status < 200 || status >= 300) return failed(`its URL answered HTTP ${status}`);
  if (outcome.responseBodyFilled) return failed(`its answer was too large to read whole (HTTP ${status})`);
  let data: unknown;
  try {
    data = JSON.parse(outcome.responseBody ?? "");
  } catch {
    data = undefined;
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) return failed(`its answer was not a JSON object (HTTP ${status})`);
  // A receiver that echoes a header back must not put a secret into the model's context or the call's record.
  return { ok: true, data: scrubStrings(data, secrets) as Record<string, unknown> };
}
