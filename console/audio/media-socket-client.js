// What a page holds while it is on one of the service's media sockets (a browser call, a
// supervisor's listening or take-over), released together.

export class MediaSocketClient {
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.socket = null;
    this.context = null;
    this.stream = null;
    this.capture = null;
    this.playback = null;
    this.closed = false;
  }

  /** Releases the microphone, the audio context and its worklets, and closes the socket; once. */
  teardown() {
    if (this.closed) return;
    this.closed = true;
    for (const track of this.stream?.getTracks() ?? []) track.stop();
    this.capture?.disconnect();
    this.playback?.disconnect();
    void this.context?.close().catch(() => {});
    if (this.socket && this.socket.readyState <= WebSocket.OPEN) this.socket.close(1000);
  }
}
