/** A route's path pattern matched against a request path, with its parameters decoded. */
export interface RouteMatch<R> {
  route: R;
  params: Record<string, string>;
}

/** What a path answers to a method: its route, or the methods it has when it has not that one. */
export type RouteLookup<R> = { found: RouteMatch<R> } | { allowed: readonly string[] } | undefined;

interface Entry<R> {
  route: R;
  method: string;
  pattern: RegExp;
  names: string[];
}

const PARAM = /:([a-z_]+)/g;

/**
 * Finds the route for a method and path without walking every route: routes are grouped by
 * their first two path segments (`/v1/calls`), so a request tries only its resource's few
 * patterns. The same rules as the Express router the API used before: case-sensitive, one
 * optional trailing slash, a parameter is one non-empty segment (matched encoded, then
 * decoded: `a%2Fb` is the id `a/b`), and HEAD answers as GET.
 *
 * The caller makes sure the path decodes (see pathEncoding) before asking.
 */
export class RouteTable<R> {
  private readonly groups = new Map<string, Array<Entry<R>>>();

  constructor(routes: ReadonlyArray<{ method: string; path: string; route: R }>) {
    for (const { method, path, route } of routes) {
      const names = [...path.matchAll(PARAM)].map((m) => m[1]!);
      const pattern = new RegExp("^" + path.replace(/[.]/g, "\\.").replace(PARAM, "([^/]+)") + "/?$");
      const group = RouteTable.groupOf(path);
      if (group.includes(":")) throw new Error(`route ${path}: its first two segments must be fixed`);
      const entries = this.groups.get(group) ?? [];
      entries.push({ route, method: method.toUpperCase(), pattern, names });
      this.groups.set(group, entries);
    }
  }

  lookup(method: string, path: string): RouteLookup<R> {
    const entries = this.groups.get(RouteTable.groupOf(path));
    if (!entries) return undefined;
    const wanted = method === "HEAD" ? "GET" : method;
    let allowed: string[] | undefined;
    for (const entry of entries) {
      const m = entry.pattern.exec(path);
      if (!m) continue;
      if (entry.method === wanted) {
        const params: Record<string, string> = {};
        for (let i = 0; i < entry.names.length; i++) params[entry.names[i]!] = decodeURIComponent(m[i + 1]!);
        return { found: { route: entry.route, params } };
      }
      (allowed ??= []).push(entry.method);
    }
    return allowed ? { allowed } : undefined;
  }

  /** `/v1/calls/x/end` -> `/v1/calls`: the key of the routes a path may match. */
  private static groupOf(path: string): string {
    return path.split("/", 3).join("/");
  }
}
