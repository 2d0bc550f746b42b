// A call from the browser: the microphone to the agent and its voice back, over Parley's
// native media protocol (/media/ws). The API gives a single-use token (POST /v1/calls/web);
// the socket carries 20 ms PCM16 frames at 16 kHz both ways as binary messages and the
// call's events as JSON text messages.
import { api } from "../lib/api.js";
import { audioContext, captureNode, mediaSocket, microphone, playbackNode, socketUrl } from "./audio-graph.js";
import { MediaSocketClient } from "./media-socket-client.js";

const CALL_RATE = 16000;

/**
 * `onEvent(message)` receives every JSON message of the server (`connected`, `state`,
 * `transcript`, `partial_transcript`, `turn_metrics`, `clear`, `ended`, `error`...) plus the
 * console's own `{type: "local", ...}` notes: `microphone` (`level`), `speaking`, `closed`.
 */
export class BrowserCall extends MediaSocketClient {
  constructor(onEvent) {
    super(onEvent);
    this.callId = null;
    this.connected = false;
    this.framesSent = 0;
  }

  /** Asks for the microphone, creates the call, connects. Rejects when any step fails (and cleans up). */
  async start({ agentId, record = true, context, maxDuration }) {
    try {
      this.stream = await microphone();
      this.context = await audioContext();
      const body = { agent_id: agentId, record };
      if (context && Object.keys(context).length > 0) body.context = context;
      if (maxDuration) body.max_duration = maxDuration;
      const created = await api("POST", "/v1/calls/web", { body });
      this.callId = created.call_id;
      this.onEvent({ type: "local", what: "created", call_id: created.call_id, expires_at: created.expires_at });
      await this.connect(socketUrl(created.websocket_url, { format: "pcm16", sample_rate: CALL_RATE }));
    } catch (err) {
      this.teardown();
      throw err;
    }
  }

  connect(url) {
    const { socket, opened } = mediaSocket(url, {
      ready: "connected",
      onAudio: (pcm) => this.playback?.port.postMessage({ type: "audio", pcm }, [pcm]),
      onMessage: (message) => {
        if (message.type === "connected") this.startAudio(message.sample_rate);
        else if (message.type === "clear") this.playback?.port.postMessage({ type: "clear" });
        else if (message.type === "mark") this.playback?.port.postMessage({ type: "mark", name: message.name });
        this.onEvent(message);
      },
      onClosed: (event) => {
        this.onEvent({ type: "local", what: "closed", code: event.code, reason: event.reason });
        this.teardown();
      },
      closedEarly: (event) => new Error(`The media connection closed before the call started (${event.code}${event.reason ? `: ${event.reason}` : ""})`),
    });
    this.socket = socket;
    return opened;
  }

  startAudio(rate) {
    const context = this.context;
    this.capture = captureNode(context, this.stream, rate, (pcm, peak) => {
      if (this.socket?.readyState === WebSocket.OPEN) {
        this.socket.send(pcm);
        this.framesSent++;
      }
      if (this.framesSent % 5 === 0) this.onEvent({ type: "local", what: "microphone", level: peak });
    });
    this.playback = playbackNode(context, rate, (message) => {
      if (message.type === "mark" && this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ type: "mark", name: message.name }));
      else if (message.type === "speaking") this.onEvent({ type: "local", what: "speaking", speaking: message.speaking });
      else if (message.type === "cleared") this.onEvent({ type: "local", what: "cleared", dropped_ms: message.droppedMs });
    });
    this.connected = true;
    void context.resume();
  }

  setMuted(muted) {
    this.capture?.port.postMessage({ type: "mute", muted });
  }

  sendDigit(digit) {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ type: "dtmf", digit }));
  }

  /** Hangs up: the server ends the call (and sends `ended`), then closes the socket. */
  hangUp() {
    if (this.socket?.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify({ type: "hangup" }));
      const socket = this.socket;
      setTimeout(() => socket.readyState !== WebSocket.CLOSED && socket.close(1000, "hang-up"), 5000);
    } else {
      this.teardown();
    }
  }
}
