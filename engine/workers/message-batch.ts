/**
 * Messages to one thread, sent together: everything posted in one turn of the event loop goes
 * as one `postMessage` (with every transferred buffer), at the end of the turn. Hundreds of
 * calls post a frame each every 20 ms; one message per frame would cost each side an event
 * dispatch per frame.
 */
export class MessageBatch<M> {
  private messages: M[] = [];
  private transfers: ArrayBuffer[] = [];
  private scheduled = false;

  constructor(private readonly send: (batch: M[], transfer: ArrayBuffer[]) => void) {}

  post(message: M, transfer: ArrayBuffer[] = []): void {
    this.messages.push(message);
    if (transfer.length > 0) this.transfers.push(...transfer);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Sends what is waiting now. */
  flush(): void {
    this.scheduled = false;
    if (this.messages.length === 0) return;
    const messages = this.messages;
    const transfers = this.transfers;
    this.messages = [];
    this.transfers = [];
    this.send(messages, transfers);
  }
}
