import type { Kysely } from "kysely";

/**
 * Account secrets (issue 31): values that custom HTTP tools put in their headers
 * (`{{secrets.NAME}}`) or sign their requests with. Written through `POST /v1/secrets` and never
 * read back through the API; stored as given, like webhook signing secrets. One row per name
 * and account; the list walks `(account_id, created_at, name)`, the name standing for the id.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("secrets")
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("secrets_pk", ["account_id", "name"])
    .execute();
  await db.schema.createIndex("secrets_account_created").on("secrets").columns(["account_id", "created_at", "name"]).execute();
}
