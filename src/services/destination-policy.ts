import type { Config } from "../config.js";
import { ApiError } from "../core/api-error.js";
import { callingCode } from "../core/calling-code.js";
import { canonicalPhoneNumber } from "../core/phone-number.js";
import type { Db } from "../db/database.js";
import { PhoneNumbersRepository } from "../db/repositories/phone-numbers.js";

/**
 * Toll-fraud guard for every number Parley dials for an account (outbound calls and transfer
 * destinations): it must start with an allowed prefix. `PARLEY_CALL_PREFIXES` lists them
 * ("*" allows anywhere); by default they are the calling codes of the account's active
 * numbers, so an account with numbers only in +1 cannot be made to ring premium lines abroad.
 * A destination is compared in canonical form (core/phone-number.ts): the number the carrier
 * is handed, not a spelling of it, decides.
 */
export class DestinationPolicy {
  private readonly numbers: PhoneNumbersRepository;

  constructor(
    db: Db,
    private readonly config: Pick<Config, "callPrefixes">,
  ) {
    this.numbers = new PhoneNumbersRepository(db);
  }

  /** The prefixes the account may dial; `"*"` alone allows anywhere. `db`: within a transaction. */
  async allowedPrefixes(accountId: string, db?: Db): Promise<string[]> {
    const configured = this.config.callPrefixes.trim();
    if (configured === "*") return ["*"];
    if (configured) return configured.split(",").map((p) => p.trim());
    const numbers = db ? new PhoneNumbersRepository(db) : this.numbers;
    // A calling code is the same in every spelling of a number (a trunk prefix comes after it).
    return [...new Set((await numbers.activeNumbers(accountId)).map(callingCode))];
  }

  /** Whether the account may dial `destination` now (checked again as a queued call is dialled). */
  async permits(accountId: string, destination: string, db?: Db): Promise<boolean> {
    return permitted(await this.allowedPrefixes(accountId, db), destination);
  }

  /** Throws 400 `invalid_phone_number` naming `field` unless the account may dial `destination`. */
  async check(accountId: string, destination: string, field: string): Promise<void> {
    const allowed = await this.allowedPrefixes(accountId);
    if (!permitted(allowed, destination)) throw refusal(field, destination, allowed);
  }

  /**
   * Transfer destinations follow the same prefixes, except while the account has no numbers
   * and none are configured. That is safe: such an account carries no SIP call (answering
   * needs an owned number, dialling a `from_number`), so its transfers are only signalled to
   * WebSocket clients, never dialled by Parley. It also lets an agent be created before its
   * numbers; the transfer number is checked again on every call (see MediaGateway).
   */
  async allowsTransfer(accountId: string, destination: string): Promise<boolean> {
    const allowed = await this.allowedPrefixes(accountId);
    return allowed.length === 0 || permitted(allowed, destination);
  }

  /** Throws 400 `invalid_phone_number` naming `field` unless `allowsTransfer`. */
  async checkTransfer(accountId: string, destination: string, field: string): Promise<void> {
    const allowed = await this.allowedPrefixes(accountId);
    if (allowed.length > 0 && !permitted(allowed, destination)) throw refusal(field, destination, allowed);
  }
}

function permitted(allowed: readonly string[], destination: string): boolean {
  if (allowed.includes("*")) return true;
  const number = canonicalPhoneNumber(destination);
  return allowed.some((prefix) => number.startsWith(prefix));
}

function refusal(field: string, destination: string, allowed: readonly string[]): ApiError {
  return ApiError.field(
    "invalid_phone_number",
    field,
    `calls to ${callingCode(destination)} are not allowed for this account (allowed: ${allowed.join(", ") || "none"}); PARLEY_CALL_PREFIXES sets the allowed prefixes`,
  );
}
