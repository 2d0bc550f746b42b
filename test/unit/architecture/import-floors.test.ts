import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// Imports point down (docs/architecture.md, "Floors"): scripts -> src -> engine, and inside src
// cli -> main -> http -> telephony -> services -> db -> core. A file importing from a floor above
// its own fails this test, naming the import.

/** Each folder (or root file) of src/ and its floor; higher may import lower. */
const FLOORS: Record<string, number> = {
  core: 0,
  config: 1,
  "provider-settings": 1,
  observability: 2,
  db: 2,
  services: 3,
  "engine-options": 3,
  telephony: 4,
  http: 5,
  main: 6,
  cli: 7,
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sources(full) : entry.name.endsWith(".ts") ? [full] : [];
  });
}

/** `src/x/...` or `src/x.ts` -> `x`; anything outside src -> its top folder. */
function floorName(file: string): string {
  const parts = file.split(path.sep);
  return parts[0] === "src" ? parts[1]!.replace(/\.(ts|js)$/, "") : parts[0]!;
}

/** Every relative import of the repository's TypeScript under `roots`, as "file -> target". */
function imports(roots: string[]): Array<{ file: string; target: string }> {
  return roots.flatMap((root) =>
    sources(root).flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map((m) => ({ file, target: path.normalize(path.join(path.dirname(file), m[1]!)) })),
    ),
  );
}

describe("import floors", () => {
  it("src never imports scripts/ or test/, and the engine never imports src/", () => {
    const outward = imports(["src", "engine"]).filter(({ file, target }) => {
      const to = target.split(path.sep)[0];
      return to === "scripts" || to === "test" || (file.startsWith("engine") && to === "src");
    });
    expect(outward.map(({ file, target }) => `${file} -> ${target}`)).toEqual([]);
  });

  it("inside src, imports point down", () => {
    const upward = imports(["src"])
      .filter(({ target }) => target.startsWith(`src${path.sep}`))
      .filter(({ file, target }) => {
        const from = FLOORS[floorName(file)];
        const to = FLOORS[floorName(target)];
        if (from === undefined || to === undefined) throw new Error(`no floor for ${floorName(from === undefined ? file : target)}: add it to FLOORS`);
        return to > from;
      })
      .map(({ file, target }) => `${file} -> ${target}`);
    expect(upward).toEqual([]);
  });
});
