import type { Db } from "../database.js";
import type { TestAudioTable } from "../schema.js";
import { fetchPage, type Page, type PageRequest } from "./keyset.js";

/** What is shown of a clip: never its samples. */
export type TestAudioSummary = Omit<TestAudioTable, "samples" | "account_id">;

const SUMMARY = ["id", "name", "duration_ms", "created_at"] as const;

/** An account's test audio. Every query is scoped to the account. */
export class TestAudioRepository {
  constructor(private readonly db: Db) {}

  async insert(row: TestAudioTable, db: Db = this.db): Promise<void> {
    await db.insertInto("test_audio").values(row).execute();
  }

  async find(accountId: string, id: string): Promise<TestAudioSummary | undefined> {
    return this.db.selectFrom("test_audio").select(SUMMARY).where("account_id", "=", accountId).where("id", "=", id).executeTakeFirst();
  }

  /** Which of `ids` are the account's clips. */
  async ownedIds(accountId: string, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.selectFrom("test_audio").select("id").where("account_id", "=", accountId).where("id", "in", [...ids]).execute();
    return rows.map((r) => r.id);
  }

  /** The clip's samples; undefined when the account has none of that id (deleted since). */
  async samples(accountId: string, id: string): Promise<Buffer | undefined> {
    const row = await this.db.selectFrom("test_audio").select("samples").where("account_id", "=", accountId).where("id", "=", id).executeTakeFirst();
    return row?.samples;
  }

  async page(accountId: string, page: PageRequest): Promise<Page<TestAudioSummary>> {
    return fetchPage(this.db.selectFrom("test_audio").select(SUMMARY).where("account_id", "=", accountId), "test_audio", page);
  }

  async count(accountId: string, db: Db = this.db): Promise<number> {
    const row = await db.selectFrom("test_audio").where("account_id", "=", accountId).select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom("test_audio").where("account_id", "=", accountId).where("id", "=", id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}
