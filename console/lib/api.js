// The console's only way to the service: the public /v1 API with the signed-in key.
// The key lives in sessionStorage (this tab only, gone when it closes); never in
// localStorage, never in a cookie.

const KEY_NAME = "parley.apiKey";

export const session = {
  get key() {
    return sessionStorage.getItem(KEY_NAME);
  },
  signIn(key) {
    sessionStorage.setItem(KEY_NAME, key);
  },
  signOut() {
    sessionStorage.removeItem(KEY_NAME);
    window.dispatchEvent(new CustomEvent("parley:signed-out"));
  },
};

/** An error answer of the API: `{error: {code, message, details}, meta: {request_id}}`. */
export class ApiError extends Error {
  constructor(status, body) {
    const error = body && typeof body === "object" && body.error ? body.error : null;
    super(error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = error?.code ?? "http_error";
    this.details = error?.details ?? null;
    this.requestId = body?.meta?.request_id ?? null;
    /** Field problems by top-level field name (`analysis_fields[0].type` is under `analysis_fields`). */
    this.fields = {};
    for (const problem of Array.isArray(this.details?.fields) ? this.details.fields : []) {
      const name = String(problem.field).split(/[.[]/)[0] || "(body)";
      const text = problem.field === name ? problem.message : `${problem.field}: ${problem.message}`;
      (this.fields[name] ??= []).push(text);
    }
  }

  /** Problems not tied to one of `known` fields (shown at the top of a form). */
  otherProblems(known) {
    return Object.entries(this.fields)
      .filter(([name]) => !known.includes(name))
      .flatMap(([, messages]) => messages);
  }
}

function queryString(query) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== "") params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/**
 * Calls the API: `api("GET", "/v1/agents", {query: {limit: 20}})`. Resolves with the parsed
 * body (or the text for `text: true`), rejects with an ApiError. A refused key signs out.
 */
export async function api(method, path, { body, query, text = false, key = session.key } = {}) {
  const headers = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  let res;
  try {
    res = await fetch(path + queryString(query), { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store", credentials: "omit" });
  } catch (err) {
    throw new ApiError(0, { error: { code: "network_error", message: `The service cannot be reached (${err.message})` } });
  }
  const raw = await res.text();
  let parsed = raw;
  if ((res.headers.get("content-type") ?? "").includes("application/json")) {
    try {
      parsed = raw ? JSON.parse(raw) : null;
    } catch {
      parsed = null;
    }
  }
  if (!res.ok) {
    const error = new ApiError(res.status, parsed);
    if (res.status === 401 && key === session.key) session.signOut();
    throw error;
  }
  return text ? raw : parsed;
}

/** Every page of a list, up to `max` items. */
export async function listAll(path, query = {}, max = 500) {
  const items = [];
  let cursor;
  do {
    const page = await api("GET", path, { query: { ...query, limit: 100, cursor } });
    items.push(...page.data);
    cursor = page.has_more ? page.next_cursor : undefined;
  } while (cursor && items.length < max);
  return items;
}
