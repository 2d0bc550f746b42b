import { describe, expect, it } from "vitest";
import { githubSlug, headingAnchors, markdownLinks, tableRows } from "../../helpers/markdown.js";

// The documentation tests are only as good as their reading of Markdown: these are GitHub's
// anchors as github.com makes them for headings of this repository's kind.
describe("the documentation tests' Markdown reading", () => {
  it("makes GitHub's anchors", () => {
    expect(githubSlug("Native protocol: `/media/ws`")).toBe("native-protocol-mediaws");
    expect(githubSlug("SIP calls: whose RTP is heard")).toBe("sip-calls-whose-rtp-is-heard");
    expect(githubSlug("The `parley` command")).toBe("the-parley-command");
    expect(githubSlug("Latest results: turn-taking, both endpointing modes")).toBe("latest-results-turn-taking-both-endpointing-modes");
    expect(githubSlug("Rate limits and plans")).toBe("rate-limits-and-plans");
    expect(githubSlug("PARLEY_PLAN_PRO_AGENTS & co.")).toBe("parley_plan_pro_agents--co");
    expect([...headingAnchors("# A\n## Notes\n```\n# not a heading\n```\n### Notes\n")]).toEqual(["a", "notes", "notes-1"]);
  });

  it("finds links outside code only", () => {
    const page = "See [api](api.md#errors) and ![shot](screenshots/a.png).\n`[not](a link)`\n```\n[nor](this)\n```\n";
    expect(markdownLinks(page)).toEqual([
      { line: 1, target: "api.md#errors" },
      { line: 1, target: "screenshots/a.png" },
    ]);
  });

  it("reads a table's rows by its first header", () => {
    const page = "| variable | default |\n|---|---|\n| `PARLEY_PORT` | `8080` |\n| `A\\|B` | x |\n\ntext\n| other | x |\n|---|---|\n| no | y |\n";
    expect(tableRows(page, "variable")).toEqual([
      { line: 3, cells: ["`PARLEY_PORT`", "`8080`"] },
      { line: 4, cells: ["`A|B`", "x"] },
    ]);
  });
});
