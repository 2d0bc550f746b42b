import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import type { WebSocket } from "ws";
import { NATIVE_FORMATS, NATIVE_OPUS_RATES, NATIVE_PCM_RATES, NativeTransport, type NativeFormat } from "../../engine/index.js";
import { ApiError } from "../core/api-error.js";
import type { CallRecord } from "../db/repositories/calls.js";
import type { Services } from "../services/container.js";
import type { LiveCallStart } from "../services/live-calls.js";
import { grants } from "../services/permissions.js";
import { invalidCallToken } from "../services/web-call-tokens.js";
import type { EngineSlot } from "./engine-share.js";
import { parseContext, parseMaxDuration } from "./media-call-parameters.js";
import type { LiveCallRunner } from "./media-endpoint.js";
import { refusalCloseCode } from "./refusal-close-code.js";
import { SocketServerEndpoint } from "./socket-server-endpoint.js";
import { refuseUpgrade } from "./upgrade-response.js";

/**
 * Largest WebSocket message accepted; a larger one closes the connection (1009). Native audio
 * is 20 ms frames (640 bytes of 16 kHz PCM16, 1,920 at 48 kHz) or microphone chunks of a few
 * KiB: 64 KiB leaves ample room.
 */
const NATIVE_MAX_MESSAGE_BYTES = 64 * 1024;

/** The socket's audio, and whether tool calls are shown in full (not to a browser call's visitor). */
interface AudioOptions {
  format: NativeFormat;
  sampleRate: number;
  toolDetails: boolean;
}

/**
 * `/media/ws`, Parley's native protocol. A client authenticates with an API key holding
 * `calls:write` (Authorization header, `agent_id` and the call's settings in the query), or,
 * from a browser, with a web call token from `POST /v1/calls/web` in the query (`token`): the
 * token says the account, agent, call id and settings. Refusals known before the handshake
 * are answered over HTTP; the call row is made once the socket is open.
 */
export class NativeMediaEndpoint extends SocketServerEndpoint {
  readonly path = "/media/ws";

  constructor(
    private readonly services: Services,
    private readonly runner: LiveCallRunner,
    private readonly logger: Logger,
  ) {
    super(NATIVE_MAX_MESSAGE_BYTES);
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): void {
    void this.accept(req, socket, head, url);
  }

  private async accept(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    let setup: LiveCallStart;
    let slot: EngineSlot;
    let audio: AudioOptions;
    try {
      const token = url.searchParams.get("token");
      audio = { ...audioOptions(url.searchParams), toolDetails: token === null };
      if (token === null) {
        setup = await this.keySetup(req, url.searchParams);
        await this.services.liveCalls.checkStartable(setup);
        slot = await this.runner.admit(setup.account.id);
      } else {
        // The slot before the single-use token is used up: a browser refused for capacity retries with the same token.
        slot = await this.runner.admit(await this.services.webCallTokens.accountOf(token));
        try {
          setup = await this.tokenSetup(token, url.searchParams);
          await this.services.liveCalls.checkStartable(setup);
        } catch (err) {
          slot.release();
          throw err;
        }
      }
    } catch (err) {
      refuseUpgrade(socket, err);
      return;
    }
    // A handshake that never completes gives the engine slot back with its socket, also one
    // whose socket was already destroyed (reset) while the call was being admitted.
    const abandon = () => slot.release();
    socket.once("close", abandon);
    if (socket.destroyed) abandon();
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      socket.off("close", abandon);
      void this.start(ws, setup, audio, slot);
    });
  }

  /** A call started with an API key: everything it needs is in the query. */
  private async keySetup(req: IncomingMessage, q: URLSearchParams): Promise<LiveCallStart> {
    const { key, account } = await this.services.apiKeys.authenticate(req.headers.authorization?.match(/^Bearer\s+(\S+)$/i)?.[1]);
    if (!grants(key.permissions, "calls:write")) throw new ApiError(403, "forbidden", "This API key lacks the 'calls:write' permission");
    const agentId = q.get("agent_id");
    if (!agentId) throw ApiError.field("invalid_request", "agent_id", "is required");
    const agent = await this.services.agents.get(account.id, agentId);
    return {
      account,
      agent,
      direction: "web",
      phoneNumber: null,
      fromNumber: null,
      record: q.get("record") !== "false",
      maxDuration: parseMaxDuration(q.get("max_duration")),
      metadata: {},
      context: parseContext(q.get("context")),
    };
  }

  /** A browser call: the token (used up here) says the account, agent, call id and settings; the query's own are not read. */
  private async tokenSetup(token: string, q: URLSearchParams): Promise<LiveCallStart> {
    const grant = await this.services.webCallTokens.redeem(token, q.get("agent_id") ?? undefined);
    const account = await this.services.accounts.find(grant.accountId);
    if (!account) throw invalidCallToken();
    const agent = await this.services.agents.get(account.id, grant.agentId);
    return {
      callId: grant.callId,
      account,
      agent,
      direction: "web",
      phoneNumber: null,
      fromNumber: null,
      record: grant.record,
      maxDuration: grant.maxDuration,
      metadata: {},
      context: grant.context,
    };
  }

  /**
   * A call whose socket is open: its row is made now, so a handshake that never completes
   * leaves none. A refusal here (the last call slot or the credit taken since the check before
   * the upgrade) is told over the socket.
   */
  private async start(ws: WebSocket, setup: LiveCallStart, audio: AudioOptions, slot: EngineSlot): Promise<void> {
    const transport = new NativeTransport(ws, audio);
    transport.watchReading(this.services.config.media.readTimeoutMs);
    let call: CallRecord;
    try {
      call = await this.services.liveCalls.begin(setup);
    } catch (err) {
      slot.release();
      if (!(err instanceof ApiError)) this.logger.error({ err }, "native call not started");
      const error = err instanceof ApiError ? err : new ApiError(500, "internal_error", "Internal error");
      transport.refuse(error.code, error.message, refusalCloseCode(error));
      return;
    }
    transport.sendConnected(call.id);
    await this.runner.runCall(call, setup, transport, slot);
  }
}

function audioOptions(q: URLSearchParams): Omit<AudioOptions, "toolDetails"> {
  const format = (q.get("format") ?? "pcm16") as NativeFormat;
  if (!(NATIVE_FORMATS as readonly string[]).includes(format)) throw ApiError.field("invalid_request", "format", `must be one of ${NATIVE_FORMATS.join(", ")}`);
  const rates: readonly number[] = format === "opus" ? NATIVE_OPUS_RATES : NATIVE_PCM_RATES;
  const sampleRate = Number(q.get("sample_rate") ?? 16000);
  if (!rates.includes(sampleRate)) throw ApiError.field("invalid_request", "sample_rate", `must be one of ${rates.join(", ")} for ${format}`);
  return { format, sampleRate };
}
