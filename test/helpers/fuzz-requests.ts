import fc from "fast-check";
import type { JsonSchema } from "./json-schema-check.js";
import { exampleOf, fillPath, type FieldHints, type Operation } from "./openapi-operations.js";

/** One request the fuzz sends: everything but the host. */
export interface FuzzRequest {
  method: string;
  /** Path and query string, encoded as sent. */
  target: string;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
  /** What the body is, for failure messages (a body can be megabytes). */
  bodyKind: string;
  /** The request line and headers are over what Node's HTTP parser accepts (it answers 431 itself, before the service): not sent. */
  oversized: boolean;
}

/** Node's default limit on the request line plus headers is 16 KiB; stay clear of it. */
const MAX_HEAD_BYTES = 14_000;

export interface FuzzContext {
  /** Ids that exist, by path parameter name. */
  realIds: Record<string, string>;
  /** Id prefixes by path parameter name (`agent_` for agent_id), for ids that look right and do not exist. */
  prefixes: Record<string, string>;
  /** Good values for body fields, by name, for bodies built from the schema. */
  hints: FieldHints;
  /** Authorization header value that works. */
  authorization: string;
  /** The service's body limit: one body kind is just over it. */
  bodyLimitBytes: number;
}

const ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const alnum = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...ALNUM), minLength: min, maxLength: max });
/** Characters a header value may carry (fetch refuses anything else before sending). */
const headerChar = fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c));
const headerText = (min: number, max: number) => fc.string({ unit: headerChar, minLength: min, maxLength: max });

/** Path segments that are not what they look like: broken escapes, encoded slashes, dots, NUL, overlong UTF-8. */
const TRICKY_SEGMENTS = ["%", "%zz", "%E0%A4%A", "%00", "..%2F..%2Fetc%2Fpasswd", "%2F", "a%2Fb", "%C0%AF", "%ED%A0%80", "%FF", "%20", "null", "undefined", "0", "-1", "1e309", "%5B%5D", "%7B%7D", "*", "'%20OR%201=1--"];

function encodeSegment(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return "%ED%A0%80"; // a lone surrogate has no UTF-8: send what it would have been
  }
}

function pathValue(name: string, ctx: FuzzContext): fc.Arbitrary<string> {
  const prefix = ctx.prefixes[name] ?? "";
  const real = ctx.realIds[name];
  return fc.oneof(
    ...(real === undefined ? [] : [{ arbitrary: fc.constant(encodeSegment(real)), weight: 8 }]),
    { arbitrary: alnum(20, 20).map((s) => encodeSegment(prefix + s)), weight: 2 },
    { arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 40 }).map(encodeSegment), weight: 2 },
    { arbitrary: fc.stringMatching(/^\+?[0-9]{1,20}$/).map(encodeSegment), weight: 1 },
    { arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 1000, maxLength: 3000 }).map(encodeSegment), weight: 1 },
    { arbitrary: fc.constantFrom(...TRICKY_SEGMENTS), weight: 2 },
  );
}

/** Values a query parameter of this schema might get: right ones (mostly), wrong types, huge, empty. */
function queryValue(schema: JsonSchema, right: Array<fc.Arbitrary<string>> = []): fc.Arbitrary<string> {
  if (Array.isArray(schema.enum)) right.push(fc.constantFrom(...schema.enum.map(String)));
  if (schema.type === "integer") right.push(fc.integer({ min: schema.minimum ?? -5, max: schema.maximum ?? 1000 }).map(String));
  return fc.oneof(
    ...right.map((arbitrary) => ({ arbitrary, weight: 12 / right.length })),
    { arbitrary: fc.string({ unit: "binary", maxLength: 30 }), weight: 2 },
    { arbitrary: fc.constantFrom("", "-1", "0", "1.5", "1e3", "99999999999999999999", "true", "null", "[]", "a,b,,c", "2026-13-45", "2026-01-31T09:00:00Z"), weight: 2 },
    { arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 500, maxLength: 1500 }), weight: 1 },
  );
}

function queryString(op: Operation, ctx: FuzzContext): fc.Arbitrary<string> {
  const declared = op.queryParams.map((p) => {
    const known = ctx.realIds[p.name] ?? ctx.hints(p.name);
    const value = () => queryValue(p.schema, typeof known === "string" ? [fc.constant(known)] : []);
    return fc.oneof(
      { arbitrary: fc.constant(null), weight: 12 },
      { arbitrary: value().map((v) => [[p.name, v]]), weight: 5 },
      // The same parameter twice: the query parser hands an array to the validation.
      { arbitrary: fc.tuple(value(), value()).map(([a, b]) => [[p.name, a], [p.name, b]]), weight: 1 },
    );
  });
  const unknown = fc.array(fc.tuple(fc.oneof(alnum(1, 12), fc.constantFrom("limit[]", "limit[a]", "__proto__", "constructor", "a.b", "")), queryValue({})), { maxLength: 2 });
  return fc.tuple(fc.tuple(...declared), fc.oneof({ arbitrary: fc.constant([]), weight: 9 }, { arbitrary: unknown, weight: 1 })).map(([params, extra]) => {
    const pairs = [...params.flatMap((p) => p ?? []), ...extra] as Array<[string, string]>;
    return pairs.length === 0 ? "" : "?" + pairs.map(([k, v]) => `${encodeSegment(k)}=${encodeSegment(v)}`).join("&");
  });
}

const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "APPLICATION/JSON",
  "application/json; charset=utf-16",
  "application/json; charset=latin1",
  "application/json; charset=utf-xyz",
  "application/vnd.api+json",
  "application/jsonx",
  "text/plain",
  "text/json",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "",
  ";;;",
];

function headers(op: Operation, ctx: FuzzContext): fc.Arbitrary<Record<string, string>> {
  const authorization = fc.oneof(
    { arbitrary: fc.constant(ctx.authorization), weight: 20 },
    { arbitrary: fc.constantFrom("", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", ctx.authorization + "x", ctx.authorization.toLowerCase(), "Bearer sk_parley_" + "A".repeat(48)), weight: 1 },
    { arbitrary: headerText(0, 200).map((s) => `Bearer ${s}`), weight: 1 },
  );
  /** Mostly absent, sometimes `value`. */
  const sometimes = (value: fc.Arbitrary<string>, absent: number) => fc.oneof({ arbitrary: fc.constant(undefined), weight: absent }, { arbitrary: value, weight: 1 });
  return fc
    .record({
      authorization,
      "content-type": fc.oneof({ arbitrary: fc.constant("application/json"), weight: 12 }, { arbitrary: fc.constantFrom(...CONTENT_TYPES), weight: 2 }),
      "content-encoding": sometimes(fc.constantFrom("gzip", "deflate", "br", "identity", "x-unknown", "gzip, gzip"), 12),
      "idempotency-key": sometimes(fc.oneof(alnum(1, 40), headerText(0, 300), fc.constant("k".repeat(256))), 2),
      accept: sometimes(fc.constantFrom("*/*", "text/html", "application/xml", "application/json;q=0", "", "a/b/c"), 3),
      "x-request-id": sometimes(fc.oneof(alnum(1, 40), headerText(0, 300)), 3),
      "x-fuzz-padding": sometimes(headerText(4000, 8000), 6),
    })
    .map((h) => Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined)) as Record<string, string>);
}

/** Sets `value` at `path` inside a copy of `body` (a path into nested objects). */
function withField(body: unknown, path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const object: Record<string, unknown> = typeof body === "object" && body !== null && !Array.isArray(body) ? { ...(body as Record<string, unknown>) } : {};
  const [head, ...rest] = path as [string, ...string[]];
  if (rest.length === 0 && value === undefined) delete object[head];
  else object[head] = withField(object[head], rest, value);
  return object;
}

/** Property paths of a schema's objects (not array items), for picking the field to mutate. */
function fieldPaths(schema: JsonSchema, prefix: string[] = []): string[][] {
  const out: string[][] = [];
  for (const [name, s] of Object.entries<JsonSchema>(schema.properties ?? {})) {
    out.push([...prefix, name]);
    if (s.type === "object") out.push(...fieldPaths(s, [...prefix, name]));
  }
  return out;
}

const deep = (depth: number, open: string, close: string, inner = "1") => open.repeat(depth) + inner + close.repeat(depth);

interface Body {
  body: string | Uint8Array | undefined;
  kind: string;
}

function bodyArbitrary(op: Operation, ctx: FuzzContext): fc.Arbitrary<Body> {
  const json = (kind: string) => (value: unknown): Body => ({ body: JSON.stringify(value), kind });
  const schema = op.body ?? { type: "object", properties: {} };
  const example = exampleOf(schema, ctx.hints);
  const exampleText = JSON.stringify(example);
  const paths = fieldPaths(schema);
  const anyJson = fc.jsonValue({ maxDepth: 3 });
  const mutated = paths.length === 0
    ? fc.constant<Body>({ body: JSON.stringify(example), kind: "schema example" })
    : fc.tuple(fc.constantFrom(...paths), fc.oneof(anyJson, fc.constant(undefined), fc.constant(null), fc.string({ unit: "binary", maxLength: 50 }), fc.string({ minLength: 20_000, maxLength: 30_000 }))).map(([path, value]) =>
        json(`schema example with ${path.join(".")} = ${value === undefined ? "(removed)" : JSON.stringify(value).slice(0, 60)}`)(withField(example, path, value)),
      );
  const declaredKeys = paths.filter((p) => p.length === 1).map((p) => p[0]!);
  const options: Array<fc.WeightedArbitrary<Body>> = [
    { arbitrary: mutated, weight: op.body ? 8 : 1 },
    { arbitrary: fc.constant<Body>({ body: JSON.stringify(example), kind: "schema example" }), weight: op.body ? 4 : 0 },
    { arbitrary: anyJson.map(json("arbitrary JSON")), weight: 2 },
    { arbitrary: fc.dictionary(fc.constantFrom(...declaredKeys, "unknown_field", "__proto__", "constructor"), anyJson, { maxKeys: 6 }).map(json("declared keys, random values")), weight: declaredKeys.length > 0 ? 3 : 0 },
    { arbitrary: fc.integer({ min: 100, max: 20_000 }).map((d) => ({ body: deep(d, "[", "]"), kind: `array nested ${d} deep` })), weight: 1 },
    {
      arbitrary: fc.tuple(fc.constantFrom(...declaredKeys, "metadata"), fc.integer({ min: 100, max: 5_000 })).map(([k, d]) => ({ body: `{"${k}":${deep(d, '{"a":', "}")}}`, kind: `${k} nested ${d} deep` })),
      weight: 1,
    },
    { arbitrary: fc.integer({ min: 1_000, max: 50_000 }).map((n) => ({ body: JSON.stringify(Array.from({ length: n }, (_, i) => i)), kind: `array of ${n}` })), weight: 1 },
    { arbitrary: fc.constantFrom("null", "", "true", "1", '"text"', "[]", "{}", "{}{}", "{,}", '{"a":1,}', "NaN", "\u0000", "\ufeff{}").map((body) => ({ body, kind: `literal ${JSON.stringify(body)}` })), weight: 2 },
    { arbitrary: fc.string({ unit: "binary", maxLength: 200 }).map((body) => ({ body, kind: "text" })), weight: 1 },
    { arbitrary: fc.integer({ min: 0, max: Math.max(0, exampleText.length - 1) }).map((k) => ({ body: exampleText.slice(0, k), kind: `example cut at ${k}` })), weight: 2 },
    { arbitrary: fc.uint8Array({ minLength: 1, maxLength: 64 }).map((body) => ({ body, kind: "random bytes" })), weight: 1 },
    { arbitrary: fc.constant<Body>({ body: `{"pad":"${"x".repeat(ctx.bodyLimitBytes)}"}`, kind: "over the body limit" }), weight: 1 },
  ];
  return fc.oneof(...options.filter((o) => o.weight > 0));
}

/**
 * Random requests for one operation: path parameters (existing ids, ids that look right and do
 * not exist, unicode, huge, broken escapes), declared query parameters with right and wrong
 * values plus unknown ones, odd headers, and bodies (the schema's example with one field
 * changed, arbitrary JSON, deep nesting, big arrays, truncated JSON, bytes, over the limit).
 * Operations without a body get one now and then, and those with one sometimes go without.
 */
export function fuzzRequest(op: Operation, ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const pathArb = fc.record(Object.fromEntries(op.pathParams.map((name) => [name, pathValue(name, ctx)])) as Record<string, fc.Arbitrary<string>>);
  const body = fc.oneof(
    { arbitrary: bodyArbitrary(op, ctx), weight: op.body ? 9 : 1 },
    { arbitrary: fc.constant<Body>({ body: undefined, kind: "none" }), weight: op.body ? 1 : 9 },
  );
  return fc.record({ params: pathArb, query: queryString(op, ctx), headers: headers(op, ctx), body }).map(({ params, query, headers: h, body: b }) => {
    const sent = { ...h };
    if (b.body === undefined) {
      delete sent["content-type"];
      delete sent["content-encoding"];
    }
    const target = fillPath(op.path, params) + query;
    const headBytes = () => target.length + Object.entries(sent).reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
    if (headBytes() > MAX_HEAD_BYTES) delete sent["x-fuzz-padding"];
    return { method: op.method, target, headers: sent, body: b.body, bodyKind: b.kind, oversized: headBytes() > MAX_HEAD_BYTES };
  });
}
