/** A place taken by `AddressSlots.take`; `release` gives it back (once, however often it is called). */
export interface Slot {
  release(): void;
}

/**
 * Places for connections in one state (Twilio streams not yet authenticated), capped in all
 * and per client address key, so one client cannot take them all and many cannot exhaust
 * the process.
 */
export class AddressSlots {
  private total = 0;
  private readonly byAddress = new Map<string, number>();

  constructor(
    private readonly maxTotal: number,
    private readonly maxPerAddress: number,
  ) {}

  /** A slot for `address`, or which cap refused it. */
  take(address: string): Slot | { refused: "total" | "address" } {
    const held = this.byAddress.get(address) ?? 0;
    if (held >= this.maxPerAddress) return { refused: "address" };
    if (this.total >= this.maxTotal) return { refused: "total" };
    this.total += 1;
    this.byAddress.set(address, held + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.total -= 1;
        const left = (this.byAddress.get(address) ?? 1) - 1;
        if (left > 0) this.byAddress.set(address, left);
        else this.byAddress.delete(address);
      },
    };
  }
}
