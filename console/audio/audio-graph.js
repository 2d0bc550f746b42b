// The browser side of Parley's media sockets, shared by a browser call (browser-call.js) and a
// supervisor on a live call (call-supervisor.js): the microphone, the audio context with the
// capture and playback worklets, and the socket address on this page's own origin.

/** Playback waits for this much audio before it starts, and after a gap (docs/console.md). */
const JITTER_MS = 80;

/** The microphone, with the browser's echo cancellation, noise suppression and gain control. */
export function microphone() {
  return navigator.mediaDevices.getUserMedia({
    audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true, channelCount: 1 },
  });
}

/** An audio context with the capture and playback worklets loaded. */
export async function audioContext() {
  const context = new AudioContext({ latencyHint: "interactive" });
  try {
    await Promise.all([
      context.audioWorklet.addModule(new URL("./capture-worklet.js", import.meta.url).href),
      context.audioWorklet.addModule(new URL("./playback-worklet.js", import.meta.url).href),
    ]);
  } catch (err) {
    void context.close().catch(() => {});
    throw err;
  }
  return context;
}

/**
 * A media socket's address on this page's own origin (the console and the media endpoints are
 * one service, whatever host the API's answer names), with `params` added to its query.
 */
export function socketUrl(pathAndQuery, params = {}) {
  const given = new URL(pathAndQuery, location.href);
  const url = new URL(given.pathname + given.search, location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, String(value));
  return url.toString();
}

/**
 * Opens one of the service's media sockets: binary messages go to `onAudio(arrayBuffer)`, JSON
 * text messages to `onMessage(message)`, and `onClosed(event)` once it closes. `opened`
 * resolves once the server's `ready` message has come (after `onMessage` has had it); it
 * rejects on an `error` message before that, or with `closedEarly(event)` on a close.
 */
export function mediaSocket(url, { ready, onAudio, onMessage, onClosed, closedEarly }) {
  const socket = new WebSocket(url);
  socket.binaryType = "arraybuffer";
  const opened = new Promise((resolve, reject) => {
    let settled = false;
    socket.onmessage = (event) => {
      if (typeof event.data !== "string") return onAudio(event.data);
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      if (!settled && message.type === "error") {
        settled = true;
        reject(Object.assign(new Error(message.message), { code: message.code }));
      }
      onMessage(message);
      if (!settled && message.type === ready) {
        settled = true;
        resolve();
      }
    };
    socket.onclose = (event) => {
      if (!settled) {
        settled = true;
        reject(closedEarly(event));
      }
      onClosed(event);
    };
  });
  return { socket, opened };
}

/**
 * Plays PCM16 frames at `rate` through the jitter buffer: post `{type: "audio", pcm}`,
 * `{type: "clear"}` or `{type: "mark", name}` to its port; `onMessage` gets its `speaking`,
 * `cleared` and `mark` notes.
 */
export function playbackNode(context, rate, onMessage) {
  const node = new AudioWorkletNode(context, "parley-playback", {
    numberOfInputs: 0,
    numberOfOutputs: 1,
    outputChannelCount: [1],
    processorOptions: { inputRate: rate, jitterMs: JITTER_MS },
  });
  node.port.onmessage = (event) => onMessage(event.data);
  node.connect(context.destination);
  return node;
}

/**
 * The microphone `stream` as 20 ms PCM16 frames at `rate`: `onFrame(pcm, peak)` for each, in
 * real time, silence when muted (post `{type: "mute", muted}` to its port).
 */
export function captureNode(context, stream, rate, onFrame) {
  const node = new AudioWorkletNode(context, "parley-capture", {
    numberOfInputs: 1,
    numberOfOutputs: 0,
    channelCount: 1,
    channelCountMode: "explicit",
    channelInterpretation: "speakers",
    processorOptions: { targetRate: rate },
  });
  node.port.onmessage = (event) => {
    if (event.data.type === "frame") onFrame(event.data.pcm, event.data.peak);
  };
  context.createMediaStreamSource(stream).connect(node);
  return node;
}
