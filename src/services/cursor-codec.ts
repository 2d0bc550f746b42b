import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { ConfigError, type Config } from "../config.js";
import { ApiError } from "../core/api-error.js";
import type { SortOrder } from "../db/repositories/keyset.js";
import { createPrivateFileOnce, ensurePrivateDir, tightenFile } from "../core/private-files.js";

/** Position in a list ordered by `(created_at, id)`. */
export interface CursorPosition {
  createdAt: string;
  id: string;
}

const CURSOR_TTL_MS = 24 * 60 * 60 * 1000;
/** Scopes of lists asked for lately (most lists are asked for with few filter sets): each is hashed once. */
const SCOPES = new Map<string, string>();
const MAX_SCOPES = 1000;
const SECRET_FILE = "cursor-secret";
/** Below this, cursors and recording links could be forged by guessing the secret. */
const MIN_SECRET_BYTES = 32;

interface CursorPayload {
  /** Hash of the list's name, filters and order: a cursor only continues the list it came from. */
  s: string;
  c: string;
  i: string;
  /** Expiry, ms since epoch. */
  e: number;
}

/**
 * The HMAC secret of cursors and recording links (and of whatever else is derived from it):
 * PARLEY_SECRET when set, the same on every node behind one load balancer, so that any node
 * accepts what another signed, and then no file is read or made; otherwise the data
 * directory's own (loadCursorSecret), enough for a single node.
 */
export function loadServiceSecret(config: Pick<Config, "secret" | "dataDir">): Buffer {
  if (!config.secret) return loadCursorSecret(config.dataDir);
  // loadConfig checks the setting; a Config built another way (overrides) is checked again,
  // since Buffer.from(hex) would quietly make a shorter key of a bad value. Not quoted: a credential.
  if (!new RegExp(`^[0-9a-fA-F]{${MIN_SECRET_BYTES * 2}}$`).test(config.secret)) {
    throw new ConfigError("PARLEY_SECRET", `must be exactly ${MIN_SECRET_BYTES * 2} hex characters (${MIN_SECRET_BYTES} random bytes)`);
  }
  return Buffer.from(config.secret, "hex");
}

/**
 * Reads the HMAC secret of cursors and recording links from the data directory (hex, owner-only),
 * creating it on first use so they survive restarts. Several processes starting at once share
 * the one file that is created; a secret under 32 bytes stops start-up.
 */
export function loadCursorSecret(dataDir: string): Buffer {
  const file = path.join(dataDir, SECRET_FILE);
  ensurePrivateDir(dataDir);
  if (!existsSync(file)) createPrivateFileOnce(file, randomBytes(MIN_SECRET_BYTES).toString("hex") + "\n");
  tightenFile(file);
  const text = readFileSync(file, "utf8").trim();
  // Buffer.from(hex) silently stops at the first bad character: check the whole text.
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(text) || text.length / 2 < MIN_SECRET_BYTES) {
    throw new ConfigError(
      "PARLEY_DATA_DIR",
      `${file} must hold a secret of at least ${MIN_SECRET_BYTES} bytes written as hex (${MIN_SECRET_BYTES * 2} characters); ` +
        "a shorter one would let list cursors and recording links be forged. Delete the file to have a new one made " +
        "(cursors and recording links given out so far stop working)",
    );
  }
  return Buffer.from(text, "hex");
}

/**
 * Opaque, HMAC-signed list cursors bound to the list's filters and order, valid 24 hours.
 * Anything that does not verify is `invalid_cursor`.
 */
export class CursorCodec {
  constructor(
    private readonly secret: Buffer,
    private readonly now: () => number = Date.now,
  ) {}

  /** What a cursor is bound to: the list, its filters (undefined ones left out) and its order. */
  static scope(list: string, filters: Record<string, unknown>, order: SortOrder): string {
    const entries: Array<[string, unknown]> = Object.entries(filters).filter(([, v]) => v !== undefined);
    entries.push(["order", order]);
    const canonical = JSON.stringify([list, entries.sort(([a], [b]) => a.localeCompare(b))]);
    let scope = SCOPES.get(canonical);
    if (scope === undefined) {
      scope = createHash("sha256").update(canonical).digest("base64url").slice(0, 22);
      if (SCOPES.size >= MAX_SCOPES) SCOPES.clear();
      SCOPES.set(canonical, scope);
    }
    return scope;
  }

  encode(scope: string, position: CursorPosition): string {
    const payload: CursorPayload = { s: scope, c: position.createdAt, i: position.id, e: this.now() + CURSOR_TTL_MS };
    const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
    return `${body}.${this.sign(body)}`;
  }

  decode(scope: string, cursor: string): CursorPosition {
    const invalid = (why: string) => ApiError.field("invalid_cursor", "cursor", `invalid cursor (${why}); start again from the first page`);
    const [body, signature, extra] = cursor.split(".");
    if (!body || !signature || extra !== undefined) throw invalid("malformed");
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid("signature does not match");
    let payload: CursorPayload;
    try {
      payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as CursorPayload;
    } catch {
      throw invalid("malformed");
    }
    if (payload.s !== scope) throw invalid("it belongs to another list, filter or order");
    if (typeof payload.e !== "number" || payload.e < this.now()) throw invalid("expired");
    if (typeof payload.c !== "string" || typeof payload.i !== "string") throw invalid("malformed");
    return { createdAt: payload.c, id: payload.i };
  }

  private sign(body: string): string {
    return createHmac("sha256", this.secret).update(body).digest("base64url");
  }
}
