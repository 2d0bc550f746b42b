import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../../engine/index.js";
import { documentationPages, headingAnchors, markdownLinks, readPage } from "../../helpers/markdown.js";

const root = packageRoot(import.meta.url);

/** Every relative link of README.md and docs/*.md that leads nowhere: a missing file, or an anchor no heading makes. */
function brokenLinks(): string[] {
  const broken: string[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (page: string) => {
    if (!anchorsOf.has(page)) anchorsOf.set(page, headingAnchors(readPage(root, page)));
    return anchorsOf.get(page)!;
  };
  for (const page of documentationPages(root)) {
    for (const { line, target } of markdownLinks(readPage(root, page))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...: not ours to check
      const [file, anchor] = target.split("#", 2) as [string, string | undefined];
      const resolved = file === "" ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), decodeURI(file)));
      const where = `${page}:${line} -> ${target}`;
      if (resolved.startsWith("..") || !existsSync(path.join(root, resolved))) {
        broken.push(`${where}: no file ${resolved}`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!resolved.endsWith(".md") || statSync(path.join(root, resolved)).isDirectory()) {
        broken.push(`${where}: an anchor into a file that is not a Markdown page`);
      } else if (!anchors(resolved).has(anchor)) {
        broken.push(`${where}: no heading of ${resolved} makes the anchor #${anchor}`);
      }
    }
  }
  return broken;
}

describe("links in the documentation", () => {
  it("every relative link and #anchor in README.md and docs/*.md resolves", () => {
    expect(brokenLinks()).toEqual([]);
  });
});
