import type { Config } from "../config.js";
import { FLITE_VOICES } from "../../engine/index.js";
import type { Db } from "../db/database.js";
import { AccountsService } from "./accounts.js";
import { AgentsService } from "./agents.js";
import { ApiKeysService } from "./api-keys.js";
import { CursorCodec, loadCursorSecret } from "./cursor-codec.js";
import { VoiceCatalog } from "./voices.js";

/** Every use-case service, wired once by the composition root (and by tests). */
export interface Services {
  config: Config;
  db: Db;
  cursors: CursorCodec;
  voices: VoiceCatalog;
  accounts: AccountsService;
  apiKeys: ApiKeysService;
  agents: AgentsService;
}

export function createServices(db: Db, config: Config): Services {
  const cursors = new CursorCodec(loadCursorSecret(config.dataDir));
  const voices = new VoiceCatalog(FLITE_VOICES);
  const accounts = new AccountsService(db, config, cursors);
  const apiKeys = new ApiKeysService(db);
  const agents = new AgentsService(db, { accounts, voices, cursors });
  return { config, db, cursors, voices, accounts, apiKeys, agents };
}
