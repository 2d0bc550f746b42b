/**
 * The header section of a SIP message: header lines in order, names matched without regard to
 * case or compact form (RFC 3261 7.3.3). Names are stored in their long, conventional spelling,
 * so serializing writes `Via` for a received `v`; values are kept as received (after
 * unfolding), so everything else round-trips.
 */
export interface SipHeader {
  name: string;
  value: string;
}

/** RFC 3261 7.3.3 compact forms, plus the ones later RFCs registered that peers send. */
const COMPACT_FORMS: Readonly<Record<string, string>> = {
  v: "Via", f: "From", t: "To", i: "Call-ID", m: "Contact", l: "Content-Length", c: "Content-Type",
  k: "Supported", e: "Content-Encoding", s: "Subject", r: "Refer-To", b: "Referred-By", o: "Event",
  u: "Allow-Events", x: "Session-Expires",
};

const KNOWN_NAMES = [
  "Accept", "Accept-Encoding", "Accept-Language", "Alert-Info", "Allow", "Authorization", "CSeq", "Call-Info",
  "Content-Disposition", "Content-Language", "Date", "Error-Info", "Expires", "In-Reply-To", "MIME-Version",
  "Max-Forwards", "Min-Expires", "Min-SE", "Organization", "Priority", "Proxy-Authenticate", "Proxy-Authorization",
  "Proxy-Require", "RAck", "RSeq", "Reason", "Record-Route", "Reply-To", "Require", "Retry-After", "Route",
  "Server", "Timestamp", "Unsupported", "User-Agent", "WWW-Authenticate", "Warning", "P-Asserted-Identity",
  ...Object.values(COMPACT_FORMS),
];
const CANONICAL = new Map(KNOWN_NAMES.map((name) => [name.toLowerCase(), name]));

/**
 * Headers whose comma-separated values are separate entries (RFC 3261 7.3.1). Others (Date,
 * WWW-Authenticate, ...) carry commas inside one value and are never split.
 */
const LIST_HEADERS = new Set([
  "via", "route", "record-route", "contact", "allow", "supported", "require", "proxy-require", "unsupported",
  "accept", "accept-encoding", "accept-language", "content-encoding", "content-language", "allow-events",
  "p-asserted-identity",
]);

/** The long, conventional spelling of a header name; unknown names are kept as written. */
export function canonicalHeaderName(name: string): string {
  const lower = name.toLowerCase();
  return COMPACT_FORMS[lower] ?? CANONICAL.get(lower) ?? name;
}

const key = (name: string) => canonicalHeaderName(name).toLowerCase();

export class SipHeaders {
  private readonly entries: SipHeader[];

  constructor(entries: Iterable<SipHeader> = []) {
    this.entries = [...entries].map(({ name, value }) => ({ name: canonicalHeaderName(name), value }));
  }

  /** The first value of `name` (for a list header, the first element), or undefined. */
  get(name: string): string | undefined {
    return this.getAll(name)[0];
  }

  /** Every value of `name` in order: repeated lines, and comma lists split for list headers. */
  getAll(name: string): string[] {
    const wanted = key(name);
    const lines = this.entries.filter((entry) => entry.name.toLowerCase() === wanted).map((entry) => entry.value);
    return LIST_HEADERS.has(wanted) ? lines.flatMap(splitList) : lines;
  }

  has(name: string): boolean {
    const wanted = key(name);
    return this.entries.some((entry) => entry.name.toLowerCase() === wanted);
  }

  append(name: string, value: string): this {
    this.entries.push({ name: canonicalHeaderName(name), value });
    return this;
  }

  /** Replaces every line of `name` with one line per value, where the first line was (else at the end). */
  set(name: string, ...values: string[]): this {
    const wanted = key(name);
    const first = this.entries.findIndex((entry) => entry.name.toLowerCase() === wanted);
    const at = first >= 0 ? first : this.entries.length;
    this.delete(name);
    this.entries.splice(at, 0, ...values.map((value) => ({ name: canonicalHeaderName(name), value })));
    return this;
  }

  delete(name: string): this {
    const wanted = key(name);
    for (let i = this.entries.length - 1; i >= 0; i--) if (this.entries[i]!.name.toLowerCase() === wanted) this.entries.splice(i, 1);
    return this;
  }

  /** The header lines in order (copies). */
  lines(): SipHeader[] {
    return this.entries.map((entry) => ({ ...entry }));
  }

  clone(): SipHeaders {
    return new SipHeaders(this.entries);
  }
}

/** Splits a header value on commas outside quoted strings and `<...>`. */
export function splitList(value: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let angle = false;
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const char = value[i];
    if (quoted) {
      if (char === "\\") i++;
      else if (char === '"') quoted = false;
    } else if (char === '"') quoted = true;
    else if (char === "<") angle = true;
    else if (char === ">") angle = false;
    else if (char === "," && !angle) {
      parts.push(value.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(value.slice(start).trim());
  return parts.filter((part) => part !== "");
}
