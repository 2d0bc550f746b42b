import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chownSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";

/** Debian's PostgreSQL (installed by npm run setup): missing, the tests that need it fail. */
export const POSTGRES_BIN = "/usr/lib/postgresql/15/bin";

export interface PostgresCluster {
  /** The URL of the cluster's `postgres` database (creating and dropping others). */
  adminUrl: string;
  /** A new, empty database, and its URL. */
  createDatabase(name?: string): Promise<string>;
  dropDatabase(url: string): Promise<void>;
  stop(): Promise<void>;
}

async function freeTcpPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let counter = 0;

/**
 * A throw-away PostgreSQL cluster: initdb in a temporary directory, the server on a free
 * loopback port (no other address), trusting loopback connections, C collation (the order
 * SQLite compares text in), durability off (tests do not survive power cuts). PostgreSQL refuses
 * to run as root, so as root it runs as the `postgres` user that Debian's package creates.
 */
export async function startPostgresCluster(): Promise<PostgresCluster> {
  const dir = mkdtempSync(path.join(tmpdir(), "parley-pg-"));
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) => (asRoot ? ["runuser", ["-u", "postgres", "--", cmd, ...args]] : [cmd, args]) as [string, string[]];
  if (asRoot) {
    const ids = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
    const gids = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
    if (ids.status !== 0) throw new Error("no postgres user: run npm run setup (it installs Debian's postgresql)");
    chownSync(dir, Number(ids.stdout.trim()), Number(gids.stdout.trim()));
  }
  const data = path.join(dir, "data");
  const init = spawnSync(...run(path.join(POSTGRES_BIN, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "--locale=C", "-E", "UTF8", "--no-sync"]), { encoding: "utf8" });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.error?.message}`);
  const port = await freeTcpPort();
  const settings = ["listen_addresses=127.0.0.1", `port=${port}`, `unix_socket_directories=${dir}`, "fsync=off", "synchronous_commit=off", "full_page_writes=off", "max_connections=300", "shared_buffers=64MB"];
  const server: ChildProcess = spawn(...run(path.join(POSTGRES_BIN, "postgres"), ["-D", data, ...settings.flatMap((s) => ["-c", s])]), { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  server.stderr?.on("data", (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
  const postmasterPid = () => Number(readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
  // A test process that dies without stopping the cluster takes it down with it.
  const killOnExit = () => {
    try {
      process.kill(postmasterPid(), "SIGQUIT");
    } catch {
      // already gone
    }
  };
  process.once("exit", killOnExit);
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const admin = new pg.Pool({ connectionString: adminUrl, max: 2 });
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.query("SELECT 1");
      break;
    } catch (err) {
      if (attempt > 200 || server.exitCode !== null) throw new Error(`PostgreSQL did not start: ${(err as Error).message}\n${log}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    adminUrl,
    async createDatabase(name = `parley_${process.pid}_${++counter}`) {
      await admin.query(`CREATE DATABASE ${name}`);
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async dropDatabase(url) {
      await admin.query(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
    },
    async stop() {
      await admin.end();
      // runuser does not pass signals on: the postmaster's own pid, from its pid file. SIGQUIT:
      // immediate shutdown (nothing here needs to survive).
      process.off("exit", killOnExit);
      process.kill(postmasterPid(), "SIGQUIT");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
