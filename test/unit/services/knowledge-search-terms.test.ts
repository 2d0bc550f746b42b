import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { fts5Query, MAX_SEARCH_TERMS, searchTerms, tsQuery } from "../../../src/services/knowledge-search-terms.js";

describe("searchTerms", () => {
  it("keeps the words of a question, lower-cased, without stop words or repeats", () => {
    expect(searchTerms("When are you OPEN on Saturday? Saturday!")).toEqual(["open", "saturday"]);
    expect(searchTerms("What is it?")).toEqual([]);
    expect(searchTerms("Café 3pm, 停车")).toEqual(["café", "3pm", "停车"]);
  });

  it("leaves nothing of search syntax: quotes, NEAR, *, :, (, -, ^, SQL", () => {
    const terms = searchTerms(`"park*" NEAR(a b) text:x (y -z ^w '; DROP TABLE kb_passages; -- & | ! <->`);
    expect(terms.every((t) => /^[\p{L}\p{N}]+$/u.test(t))).toBe(true);
    expect(fts5Query(terms)).not.toMatch(/[*:()^'-]/);
  });

  it("keeps at most MAX_SEARCH_TERMS terms and drops absurdly long runs", () => {
    const many = Array.from({ length: 100 }, (_, i) => `word${i}`).join(" ");
    expect(searchTerms(many)).toHaveLength(MAX_SEARCH_TERMS);
    expect(searchTerms("a".repeat(1000) + " parking")).toEqual(["parking"]);
  });

  it("builds quoted OR for FTS5 and | for to_tsquery", () => {
    expect(fts5Query(["open", "saturday"])).toBe('"open" OR "saturday"');
    expect(tsQuery(["open", "saturday"])).toBe("open | saturday");
  });

  it("gives FTS5 a query it accepts for any input", () => {
    const db = new Database(":memory:");
    db.exec("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')");
    db.prepare("INSERT INTO t (text) VALUES (?)").run("Free parking behind the building, near Elm Street");
    const find = db.prepare("SELECT text FROM t WHERE t MATCH ? ORDER BY bm25(t)");
    for (const input of ['"', "NEAR(parking street, 2)", "park*", "text:parking", "{text}: parking", "(parking", "-parking", "^parking", "parking AND OR NOT", "NOT", "' OR 1=1 --", "ünïcödé café"]) {
      const terms = searchTerms(input);
      if (terms.length > 0) expect(() => find.all(fts5Query(terms)), input).not.toThrow();
    }
    expect(find.all(fts5Query(searchTerms("Where can I park?")))).toHaveLength(1);
    db.close();
  });
});
