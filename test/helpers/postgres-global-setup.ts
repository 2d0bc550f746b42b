import pg from "pg";
import { inject } from "vitest";
import type { TestProject } from "vitest/node";
import { migrateToLatest } from "../../src/db/database.js";
import { openPostgres } from "../../src/db/postgres.js";
import { startPostgresCluster } from "./postgres-cluster.js";

/** The database every test app's own database is copied from: migrated once, here. */
export const POSTGRES_TEMPLATE = "parley_template";

declare module "vitest" {
  export interface ProvidedContext {
    /** The postgres lane's cluster (its admin connection URL); absent in the other lanes. */
    postgresAdminUrl: string;
  }
}

/**
 * vitest globalSetup of the `postgres` lane: one cluster for the lane's files. Every test app
 * (startTestApp) then runs on a database of its own copied from the migrated template. The
 * cluster's URL is provided to this lane's files only (postgresAdminUrl): an environment
 * variable would reach the workers of every lane run by the same vitest process, and put the
 * SQLite lanes on PostgreSQL.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startPostgresCluster();
  const db = openPostgres(await cluster.createDatabase(POSTGRES_TEMPLATE));
  await migrateToLatest(db);
  await db.destroy();
  project.provide("postgresAdminUrl", cluster.adminUrl);
  return () => cluster.stop();
}

/** The postgres lane's cluster admin URL; undefined in the SQLite lanes. */
export function postgresAdminUrl(): string | undefined {
  return inject("postgresAdminUrl");
}

/**
 * A new database copied from `template` (the migrated template by default; `template0` for an
 * empty one), and its URL; undefined outside the postgres lane.
 */
export async function testPostgresDatabase(template = POSTGRES_TEMPLATE): Promise<{ url: string; drop(): Promise<void> } | undefined> {
  const adminUrl = postgresAdminUrl();
  if (!adminUrl) return undefined;
  const name = `parley_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  await adminStatement(adminUrl, `CREATE DATABASE ${name} TEMPLATE ${template}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminStatement(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** Runs one statement on a short-lived connection of its own. */
async function adminStatement(adminUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
