/** A place taken by `KeyedSlots.take`; `release` gives it back (once, however often it is called). */
export interface Slot {
  release(): void;
}

/**
 * Places for things that hold a scarce resource (Twilio streams not yet authenticated, calls
 * on the engine), capped in all and per key (a client address, an account), so one key cannot
 * take them all and many cannot exhaust the process.
 */
export class KeyedSlots {
  private total = 0;
  private readonly byKey = new Map<string, number>();

  constructor(private readonly maxTotal: number) {}

  /** Places held now, in all or by `key`. */
  held(key?: string): number {
    return key === undefined ? this.total : (this.byKey.get(key) ?? 0);
  }

  /** A place for `key` when it holds fewer than `maxForKey`, or which cap refused it. */
  take(key: string, maxForKey: number): Slot | { refused: "total" | "key" } {
    const held = this.held(key);
    if (held >= maxForKey) return { refused: "key" };
    if (this.total >= this.maxTotal) return { refused: "total" };
    this.total += 1;
    this.byKey.set(key, held + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.total -= 1;
        const left = this.held(key) - 1;
        if (left > 0) this.byKey.set(key, left);
        else this.byKey.delete(key);
      },
    };
  }
}
