import { runCliJson } from "../../scripts/parley-process.js";

/** An account made with the CLI for a service run as a process, and a client for its API. */
export interface CliAccount {
  id: string;
  key: string;
  /** Calls the API of the service at `baseUrl` with the account's key (a restarted service has a new port). */
  api(baseUrl: string, method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: any }>;
}

/** Creates an account (`plan`, `credits`) and a key for it with `parley admin`, against `env`'s data directory. */
export async function cliAccount(env: NodeJS.ProcessEnv, options: { plan?: string; credits?: number } = {}): Promise<CliAccount> {
  const account = await runCliJson(["admin", "account", "create", "--name", "Acme", "--plan", options.plan ?? "pro", "--credits", String(options.credits ?? 10)], env);
  const key = (await runCliJson(["admin", "key", "create", "--account", account.id, "--name", "dev"], env)).key as string;
  return {
    id: account.id as string,
    key,
    async api(baseUrl, method, urlPath, body) {
      const res = await fetch(baseUrl + urlPath, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: body ? JSON.stringify(body) : undefined });
      return { status: res.status, body: (await res.json()) as any };
    },
  };
}
