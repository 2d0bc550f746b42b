import type { Db } from "../database.js";
import type { PhoneNumberTable } from "../schema.js";
import { jsonListSelection, shapedPage, type JsonListRow, type Page, type PageRequest } from "./keyset.js";
import { jsonField, type JsonFields } from "../json-object.js";
import { QueryShapes } from "../query-shapes.js";
import { isUniqueViolation } from "../dialect.js";

export const PHONE_NUMBER_STATUSES = ["active", "pending", "inactive"] as const;
export type PhoneNumberStatus = (typeof PHONE_NUMBER_STATUSES)[number];

export interface PhoneNumberCapabilities {
  voice: boolean;
  sms: boolean;
}

export interface PhoneNumberRecord extends Omit<PhoneNumberTable, "capability_voice" | "capability_sms" | "status"> {
  capabilities: PhoneNumberCapabilities;
  status: PhoneNumberStatus;
}

export interface PhoneNumberFilters {
  status?: PhoneNumberStatus | undefined;
  country?: string | undefined;
}

/** The operator's view across accounts (`parley admin number list`). */
export interface OperatorNumberFilters {
  status?: PhoneNumberStatus | undefined;
  accountId?: string | undefined;
  phoneNumber?: string | undefined;
}

/**
 * An item of the phone number list (GET /v1/phone-numbers): the whole number, as a single read shows it.
 * Its JSON is kept in the list's index (migrations 014, 024): a change here needs a migration that
 * indexes the new expression (the plan test fails until then).
 */
const PHONE_NUMBER_LIST_ITEM: JsonFields = {
  id: jsonField.value("id"),
  phone_number: jsonField.value("phone_number"),
  friendly_name: jsonField.value("friendly_name"),
  country: jsonField.value("country"),
  region: jsonField.value("region"),
  capabilities: jsonField.object({ voice: jsonField.boolean("capability_voice"), sms: jsonField.boolean("capability_sms") }),
  // The stored carrier: null (the default) is written in by the service, which knows the setting.
  carrier: jsonField.value("carrier"),
  status: jsonField.value("status"),
  default_agent_id: jsonField.value("default_agent_id"),
  created_at: jsonField.value("created_at"),
  updated_at: jsonField.value("updated_at"),
};

function toRecord(row: PhoneNumberTable): PhoneNumberRecord {
  const { capability_voice, capability_sms, ...rest } = row;
  return { ...rest, status: row.status as PhoneNumberStatus, capabilities: { voice: capability_voice === 1, sms: capability_sms === 1 } };
}

function toRow(record: Partial<PhoneNumberRecord>): Partial<PhoneNumberTable> {
  const { capabilities, ...rest } = record;
  return {
    ...rest,
    ...(capabilities !== undefined ? { capability_voice: capabilities.voice ? 1 : 0, capability_sms: capabilities.sms ? 1 : 0 } : {}),
  };
}

/**
 * A partial unique index refused the row: `phone_numbers_active` (a second account holding the
 * number active) or `phone_numbers_account_live` (a second live row of one account).
 */
function isHeldConflict(err: unknown): boolean {
  return isUniqueViolation(err, { sqliteColumn: "phone_numbers.phone_number", postgresIndexes: ["phone_numbers_active", "phone_numbers_account_live"] });
}

/** The list and count queries, compiled once per shape (which filters are set, the order, a cursor). */
const LISTS = new QueryShapes();

/** Phone numbers; released ones stay as `inactive` rows. */
export class PhoneNumbersRepository {
  constructor(private readonly db: Db) {}

  /** Inserts the number; false when it would make a second active holder, or a second live row of the account. */
  async insert(record: PhoneNumberRecord, db: Db = this.db): Promise<boolean> {
    try {
      await db.insertInto("phone_numbers").values(toRow(record) as PhoneNumberTable).execute();
      return true;
    } catch (err) {
      if (isHeldConflict(err)) return false;
      throw err;
    }
  }

  /** Applies the patch; false when it would make a second active holder, or a second live row of the account. */
  async update(id: string, patch: Partial<PhoneNumberRecord>, db: Db = this.db): Promise<boolean> {
    try {
      await db.updateTable("phone_numbers").set(toRow(patch)).where("id", "=", id).execute();
      return true;
    } catch (err) {
      if (isHeldConflict(err)) return false;
      throw err;
    }
  }

  async findById(id: string): Promise<PhoneNumberRecord | undefined> {
    const row = await this.db.selectFrom("phone_numbers").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toRecord(row);
  }

  /** The row holding `phoneNumber` active, whatever its account (there is at most one). */
  async findActiveHolder(phoneNumber: string): Promise<PhoneNumberRecord | undefined> {
    const row = await this.db.selectFrom("phone_numbers").selectAll().where("phone_number", "=", phoneNumber).where("status", "=", "active").executeTakeFirst();
    return row && toRecord(row);
  }

  /** The account's live (active or pending) row for `phoneNumber`, when it has one. */
  async findLive(accountId: string, phoneNumber: string): Promise<PhoneNumberRecord | undefined> {
    const row = await this.db
      .selectFrom("phone_numbers")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("phone_number", "=", phoneNumber)
      .where("status", "<>", "inactive")
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** Every account's numbers matching `filters`, oldest first: the operator's list. */
  async listAll(filters: OperatorNumberFilters): Promise<PhoneNumberRecord[]> {
    let q = this.db.selectFrom("phone_numbers").selectAll();
    if (filters.status) q = q.where("status", "=", filters.status);
    if (filters.accountId) q = q.where("account_id", "=", filters.accountId);
    if (filters.phoneNumber) q = q.where("phone_number", "=", filters.phoneNumber);
    const rows = await q.orderBy("created_at").orderBy("id").execute();
    return rows.map(toRecord);
  }

  /** The account's active row for `phoneNumber`, when it has one. */
  async findActive(accountId: string, phoneNumber: string): Promise<PhoneNumberRecord | undefined> {
    const row = await this.db
      .selectFrom("phone_numbers")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("phone_number", "=", phoneNumber)
      .where("status", "=", "active")
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /**
   * The carrier of the account's active number `phoneNumber` (canonical E.164): its name, null
   * for the service's default (PARLEY_CARRIER), undefined when the account holds no such active number.
   */
  async carrierOf(accountId: string, phoneNumber: string): Promise<string | null | undefined> {
    const row = await this.db
      .selectFrom("phone_numbers")
      .select("carrier")
      .where("account_id", "=", accountId)
      .where("phone_number", "=", phoneNumber)
      .where("status", "=", "active")
      .executeTakeFirst();
    return row === undefined ? undefined : row.carrier;
  }

  /** The account's active numbers (E.164 strings). */
  async activeNumbers(accountId: string): Promise<string[]> {
    const rows = await this.db.selectFrom("phone_numbers").select("phone_number").where("account_id", "=", accountId).where("status", "=", "active").execute();
    return rows.map((r) => r.phone_number);
  }

  /** The account's oldest active number: the default `from_number` of its calls. */
  async oldestActive(accountId: string, db: Db = this.db): Promise<PhoneNumberRecord | undefined> {
    const row = await db
      .selectFrom("phone_numbers")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("status", "=", "active")
      .orderBy("created_at", "asc")
      .orderBy("id", "asc")
      .executeTakeFirst();
    return row && toRecord(row);
  }

  private filtered(accountId: string, filters: PhoneNumberFilters) {
    let q = this.db.selectFrom("phone_numbers").where("account_id", "=", accountId);
    if (filters.status) q = q.where("status", "=", filters.status);
    if (filters.country) q = q.where("country", "=", filters.country);
    return q;
  }

  /** A page of the list, each number as its list item. */
  page(accountId: string, filters: PhoneNumberFilters, page: PageRequest): Promise<Page<JsonListRow>> {
    return shapedPage(this.db, LISTS, "phone_numbers", { accountId, ...filters }, page, ({ accountId: a, ...f }) => this.filtered(a, f).select(jsonListSelection(this.db, "phone_numbers", PHONE_NUMBER_LIST_ITEM)));
  }

  async count(accountId: string, filters: PhoneNumberFilters): Promise<number> {
    const [row] = await LISTS.rows(this.db, "phone_numbers:count", { accountId, ...filters }, ({ accountId: a, ...f }) => this.filtered(a, f).select((eb) => eb.fn.countAll<number>().as("n")));
    return Number(row!.n);
  }
}
