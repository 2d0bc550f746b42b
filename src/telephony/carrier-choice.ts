import type { CarrierName } from "../config.js";
import type { PhoneNumbersService } from "../services/phone-numbers.js";
import type { Carrier } from "./carrier.js";

/**
 * Which carrier places an outbound call: the one its `from_number` records (a number added with
 * `--carrier`), else the service's default (PARLEY_CARRIER). Carriers are those this node has
 * set up (the simulator always; SIP with a trunk; Twilio with its credentials).
 */
export class CarrierChoice {
  constructor(
    private readonly available: ReadonlyMap<CarrierName, Carrier>,
    private readonly defaultName: CarrierName,
    private readonly numbers: PhoneNumbersService,
  ) {}

  /** The carrier `name` when this node has it set up. */
  carrier(name: CarrierName): Carrier | undefined {
    return this.available.get(name);
  }

  /** The call's carrier, or the name of one it needs that is not set up here. */
  async forCall(call: { account_id: string; from_number: string | null }): Promise<Carrier | { missing: CarrierName }> {
    const number = call.from_number ? await this.numbers.findActiveByNumber(call.account_id, call.from_number) : undefined;
    const name = (number?.carrier ?? this.defaultName) as CarrierName;
    return this.available.get(name) ?? { missing: name };
  }
}
