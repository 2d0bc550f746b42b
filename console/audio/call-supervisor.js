// A supervisor on a live call (docs/supervision.md): /media/listen with a single-use token from
// POST /v1/calls/{id}/listen-token. Both sides come in stereo (caller left, agent right): each
// side's level goes to the page, the two are mixed for the speakers. With `takeover` the
// microphone goes to the caller in place of the agent until the socket closes (a hand-back).
import { api } from "../lib/api.js";
import { audioContext, captureNode, mediaSocket, microphone, playbackNode, socketUrl } from "./audio-graph.js";
import { MediaSocketClient } from "./media-socket-client.js";

/** What /media/listen sends and takes (docs/supervision.md). */
const LISTEN_RATE = 16000;
/** Each side's level is reported every this many 20 ms frames. */
const LEVEL_EVERY = 5;

/**
 * `onEvent(message)` receives the listener's JSON messages (`listening`, `transcript`, `state`,
 * `supervisor`, `ended`) plus the console's own `{type: "local", ...}` notes: `levels`
 * (`caller`, `agent`: the loudest sample of the last 100 ms, 0 to 1) and `closed` (`code`,
 * `reason`).
 */
export class CallSupervisor extends MediaSocketClient {
  constructor(callId, onEvent) {
    super(onEvent);
    this.callId = callId;
    this.mode = null;
    this.peaks = { caller: 0, agent: 0, frames: 0 };
  }

  /** `mode`: `listen` or `takeover` (asks for the microphone first). Rejects when any step fails, and cleans up. */
  async start(mode) {
    this.mode = mode;
    try {
      if (mode === "takeover") this.stream = await microphone();
      this.context = await audioContext();
      const token = await api("POST", `/v1/calls/${this.callId}/listen-token`, { body: { mode } });
      await this.connect(socketUrl(token.url, { channels: 2 }));
    } catch (err) {
      this.stop();
      throw err;
    }
  }

  connect(url) {
    const { socket, opened } = mediaSocket(url, {
      ready: "listening",
      onAudio: (pcm) => this.hear(new Int16Array(pcm)),
      onMessage: (message) => {
        if (message.type === "listening") this.startAudio(message.sample_rate);
        this.onEvent(message);
      },
      onClosed: (event) => {
        this.onEvent({ type: "local", what: "closed", code: event.code, reason: event.reason });
        this.stop();
      },
      // A refusal before the handshake reaches a browser as a bare close (1006): the likely reasons.
      closedEarly: (event) =>
        new Error(
          event.code === 4009
            ? "Someone else has taken this call over"
            : `The listening connection closed before it started (${event.code}${event.reason ? `: ${event.reason}` : ""}): the call may have ended, or it has 5 listeners already`,
        ),
    });
    this.socket = socket;
    return opened;
  }

  startAudio(rate = LISTEN_RATE) {
    this.playback = playbackNode(this.context, rate, () => {});
    if (this.stream) {
      this.capture = captureNode(this.context, this.stream, rate, (pcm) => {
        if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(pcm);
      });
    }
    void this.context.resume();
  }

  /** One stereo frame: each side's loudest sample noted, both mixed to mono for the speakers. */
  hear(stereo) {
    const mono = new Int16Array(stereo.length >> 1);
    let caller = 0;
    let agent = 0;
    for (let i = 0; i < mono.length; i++) {
      const left = stereo[2 * i];
      const right = stereo[2 * i + 1];
      caller = Math.max(caller, Math.abs(left));
      agent = Math.max(agent, Math.abs(right));
      mono[i] = Math.max(-32768, Math.min(32767, left + right));
    }
    this.playback?.port.postMessage({ type: "audio", pcm: mono.buffer }, [mono.buffer]);
    const peaks = this.peaks;
    peaks.caller = Math.max(peaks.caller, caller);
    peaks.agent = Math.max(peaks.agent, agent);
    if (++peaks.frames === LEVEL_EVERY) {
      this.onEvent({ type: "local", what: "levels", caller: peaks.caller / 32768, agent: peaks.agent / 32768 });
      this.peaks = { caller: 0, agent: 0, frames: 0 };
    }
  }

  /** Stops listening; for a take-over, closing the socket hands the call back to the agent. */
  stop() {
    this.teardown();
  }
}
