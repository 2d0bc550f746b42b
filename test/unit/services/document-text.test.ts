import { describe, expect, it } from "vitest";
import { DOCUMENT_TYPES, DocumentTextError, MAX_PDF_PAGES, documentText, splitPassages } from "../../../src/services/document-text.js";

/** A PDF string literal's escapes for `(`, `)` and `\`. */
function pdfString(text: string): string {
  return text.replace(/[\\()]/g, (ch) => `\\${ch}`);
}

/**
 * A minimal PDF written by hand: one Helvetica text line per entry of each page, 14 points
 * apart, an empty entry leaving a blank line's gap. `pages` of `null` has a page with no text
 * object (as a scanned page without OCR has none).
 */
function makePdf(pages: (string[] | null)[]): Buffer {
  const objects: string[] = ["<< /Type /Catalog /Pages 2 0 R >>"];
  const kids = pages.map((_, i) => `${4 + 2 * i} 0 R`).join(" ");
  objects.push(`<< /Type /Pages /Kids [${kids}] /Count ${pages.length} >>`);
  objects.push("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
  pages.forEach((lines, i) => {
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`);
    const operators = (lines ?? [])
      .map((line, n) => (line ? `BT /F1 12 Tf 72 ${720 - 14 * n} Td (${pdfString(line)}) Tj ET` : ""))
      .filter(Boolean)
      .join("\n");
    const content = lines ? operators : "0 0 1 rg 72 72 200 200 re f";
    objects.push(`<< /Length ${Buffer.byteLength(content, "latin1")} >>\nstream\n${content}\nendstream`);
  });
  let pdf = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(Buffer.byteLength(pdf, "latin1"));
    pdf += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(pdf, "latin1");
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, "latin1");
}

const words = (text: string): string[] => text.split(/\s+/).filter(Boolean);

describe("documentText: text/plain", () => {
  it("drops a BOM, replaces invalid bytes, normalises newlines and whitespace into paragraphs", async () => {
    const bytes = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from("Opening  hours:\r\n\tMonday\u00a0to Friday\r\n\r\n\r\n\r\nClosed on "),
      Buffer.from([0xff, 0xfe]),
      Buffer.from(" holidays.\rThanks   \n"),
    ]);
    expect(await documentText(bytes, "text/plain")).toBe("Opening hours:\nMonday to Friday\n\nClosed on \ufffd\ufffd holidays.\nThanks");
  });

  it("refuses a document with no text", async () => {
    await expect(documentText(Buffer.from(" \n\n\t "), "text/plain")).rejects.toThrow(DocumentTextError);
  });
});

describe("documentText: text/markdown", () => {
  it("keeps the words a reader sees and drops markup, URLs, images, comments and front matter", async () => {
    const markdown = [
      "---",
      "title: Secret front matter",
      "draft: true",
      "---",
      "# Bright Smile *Dental* #",
      "",
      "We are open **Monday** to _Friday_, see [our hours](https://example.test/hours \"Hours\") or [the map][map].",
      "Call `555-0100` any time.",
      "![a photo of the clinic](https://example.test/clinic.png)",
      "<!-- internal note: raise prices -->",
      "",
      "Services",
      "--------",
      "",
      "- Teeth whitening",
      "* [x] Check-ups &amp; cleaning",
      "1. Emergency care\\*",
      "",
      "> Quoted words stay.",
      "",
      "| Service | Price |",
      "| --- | ---: |",
      "| Whitening | 99 &euro; |",
      "",
      "```js",
      "const open = true;",
      "```",
      "",
      "[map]: https://example.test/map",
      "snake_case_name and 5 * 3 stay as written.",
    ].join("\n");
    const text = await documentText(Buffer.from(markdown), "text/markdown");
    expect(text).toBe(
      [
        "Bright Smile Dental",
        "We are open Monday to Friday, see our hours or the map. Call 555-0100 any time.",
        "Services",
        "Teeth whitening\nCheck-ups & cleaning\nEmergency care*",
        "Quoted words stay.",
        "Service | Price\nWhitening | 99 €",
        "const open = true;",
        "snake_case_name and 5 * 3 stay as written.",
      ].join("\n\n"),
    );
    for (const hidden of ["example.test", "photo", "internal note", "Secret front matter", "#", "**", "](", "---"]) expect(text).not.toContain(hidden);
  });

  // Linear-time parsing: each of these finishes well within the test timeout; a parser that
  // searched ahead afresh at every bracket, backtick or tag would take hours.
  const twoMegabytes = (pattern: string): Buffer => Buffer.from(pattern.repeat(Math.ceil((2 * 1024 * 1024) / pattern.length)));
  it.each(["[a](b", "`", "``x", "a` ``` `` `````` b", "[", "![", "](", "[[[[[[]", "*_", "<a", "&#", "&amp", "\\", "> ", "| ", "<!--", "# "])(
    "reads 2 MB of the pathological pattern %j",
    async (pattern) => {
      await documentText(twoMegabytes(pattern), "text/markdown").catch((error: unknown) => expect(error).toBeInstanceOf(DocumentTextError));
    },
  );

  it("reads link attempts that share one long run of spaces, and titles that never close", async () => {
    const mixed = `${"[a](b[a](<c ".repeat(50_000)}${" ".repeat(500_000)}x ${'[a](b "'.repeat(100_000)}`;
    expect(await documentText(Buffer.from(mixed), "text/markdown")).toContain("x");
  });
});

describe("documentText: text/html", () => {
  it("keeps visible text only: scripts, styles, noscript, templates and comments dropped, blocks break paragraphs", async () => {
    const html = `<!DOCTYPE html><html><head><title>Page title</title>
      <style>body { color: red } .secret { }</style>
      <script>var stolen = "SCRIPT-TEXT"; if (a < b) { document.write("</p>") }</script></head>
      <body><h1 class="x" data-note='a > b'>Bright&nbsp;Smile</h1><!-- comment text -->
      <p>Open <b>Monday</b> to Friday.<br>Closed on Sundays.</p>
      <noscript>NOSCRIPT-TEXT</noscript><template><p>TEMPLATE-TEXT</p></template>
      <ul><li>Whitening</li><li>Cleaning</li></ul>
      <table><tr><th>Service</th><th>Price</th></tr><tr><td>Whitening</td><td>&euro;99</td></tr></table>
      <SCRIPT type="module">UPPER-SCRIPT</SCRIPT>
      <pre>line one
line two</pre>
      <p>Tom &amp; Jerry &lt;3 &quot;quotes&quot; &#39;single&#39; &#x1F600; &#128512; &unknown; a &lt; b, caf&eacute;</p>
      </body></html>`;
    const text = await documentText(Buffer.from(html), "text/html");
    expect(text).toBe(
      [
        "Bright Smile",
        "Open Monday to Friday.",
        "Closed on Sundays.",
        "Whitening",
        "Cleaning",
        "Service Price",
        "Whitening €99",
        "line one\nline two",
        `Tom & Jerry <3 "quotes" 'single' 😀 😀 &unknown; a < b, café`,
      ].join("\n\n"),
    );
    for (const hidden of ["SCRIPT-TEXT", "stolen", "color", "NOSCRIPT", "TEMPLATE", "comment text", "UPPER-SCRIPT", "Page title", "<p>", "data-note"]) {
      expect(text).not.toContain(hidden);
    }
  });

  it("decodes out-of-range numeric references to U+FFFD and leaves an unclosed script's text out", async () => {
    expect(await documentText(Buffer.from("<p>a&#0;b&#xD800;c&#99999999999;d</p><script>never closed"), "text/html")).toBe("a\ufffdb\ufffdc\ufffdd");
  });

  it.each(["<a ", "<", "<!--", "&#", "&#x1", "&amp", "<a href='", "</", "<p>x", "<script>", '<a ="'])("reads 2 MB of the pathological pattern %j", async (pattern) => {
    const html = Buffer.from(pattern.repeat(Math.ceil((2 * 1024 * 1024) / pattern.length)));
    await documentText(html, "text/html").catch((error: unknown) => expect(error).toBeInstanceOf(DocumentTextError));
  });
});

describe("documentText: application/pdf", () => {
  it("reads a page's text, a wider gap starting a paragraph", async () => {
    const pdf = makePdf([["Bright Smile Dental", "", "We are open Monday to Friday,", "from 9 am to 5 pm (closed at lunch).", "", "Call us."]]);
    expect(await documentText(pdf, "application/pdf")).toBe("Bright Smile Dental\n\nWe are open Monday to Friday, from 9 am to 5 pm (closed at lunch).\n\nCall us.");
  });

  it("reads every page of a two-page PDF in order", async () => {
    const pdf = makePdf([["Page one says hello."], ["Page two says goodbye."]]);
    expect(await documentText(pdf, "application/pdf")).toBe("Page one says hello.\n\nPage two says goodbye.");
  });

  it("refuses a broken PDF, a file that is no PDF, and one with no text, with messages safe to show", async () => {
    const good = makePdf([["Some text."]]);
    const truncated = good.subarray(0, 120);
    for (const bytes of [truncated, Buffer.from("%PDF-1.7\nnot really a pdf"), Buffer.from("hello"), Buffer.alloc(0)]) {
      const error = await documentText(bytes, "application/pdf").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DocumentTextError);
      expect((error as Error).message).toBe("the file could not be read as a PDF");
    }
    const scanned = await documentText(makePdf([null, null]), "application/pdf").catch((e: unknown) => e);
    expect(scanned).toBeInstanceOf(DocumentTextError);
    expect((scanned as Error).message).toMatch(/^no text could be read from the PDF/);
  });

  it(`refuses a PDF of more than ${MAX_PDF_PAGES} pages`, async () => {
    const many = Array.from({ length: MAX_PDF_PAGES + 1 }, (_, i) => [`Page ${i + 1}.`]);
    const error = await documentText(makePdf(many), "application/pdf").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DocumentTextError);
    expect((error as Error).message).toBe(`the PDF has ${MAX_PDF_PAGES + 1} pages; at most ${MAX_PDF_PAGES} are accepted`);
    expect(await documentText(makePdf(many.slice(0, MAX_PDF_PAGES)), "application/pdf")).toContain(`Page ${MAX_PDF_PAGES}.`);
  });

  it("leaves the caller's buffer intact (pdf.js takes over the bytes it is given)", async () => {
    const pdf = makePdf([["Kept."]]);
    const copy = Buffer.from(pdf);
    await documentText(pdf, "application/pdf");
    expect(pdf.equals(copy)).toBe(true);
  });
});

describe("documentText: types", () => {
  it("accepts exactly the four types and refuses another with a DocumentTextError", async () => {
    expect(DOCUMENT_TYPES).toEqual(["text/plain", "text/markdown", "text/html", "application/pdf"]);
    await expect(documentText(Buffer.from("x"), "image/png" as never)).rejects.toThrow(DocumentTextError);
  });
});

describe("splitPassages", () => {
  const sentence = (n: number): string => `Sentence number ${n} tells the caller something useful about the clinic.`;
  const paragraph = (from: number, count: number): string => Array.from({ length: count }, (_, k) => sentence(from + k)).join(" ");

  it("keeps whole paragraphs together when they fit", () => {
    const text = ["First paragraph here.", "Second paragraph here.", "Third paragraph here."].join("\n\n");
    expect(splitPassages(text, 50)).toEqual(["First paragraph here.\n\nSecond paragraph here.", "Third paragraph here."]);
    expect(splitPassages(text)).toEqual([text]);
  });

  it("bounds every passage, cuts long paragraphs at sentence ends, and keeps every word in order", () => {
    const text = [paragraph(1, 30), "Short one.", paragraph(31, 4), paragraph(35, 25)].join("\n\n");
    for (const max of [100, 200, 800]) {
      const passages = splitPassages(text, max);
      for (const passage of passages) {
        expect(passage.length).toBeLessThanOrEqual(max);
        expect(passage.trim()).not.toBe("");
      }
      expect(words(passages.join(" "))).toEqual(words(text));
      // Cut only after a sentence: every passage ends a sentence (each sentence < max here).
      for (const passage of passages) expect(passage).toMatch(/\.$/);
    }
  });

  it("never cuts inside a word, even in a sentence longer than a passage", () => {
    const long = Array.from({ length: 120 }, (_, k) => `word${k}`).join(" ");
    const passages = splitPassages(long, 60);
    for (const passage of passages) expect(passage.length).toBeLessThanOrEqual(60);
    expect(words(passages.join(" "))).toEqual(words(long));
  });

  it("cuts a single word longer than a passage, and only that one", () => {
    const text = `Before ${"x".repeat(130)} after.`;
    const passages = splitPassages(text, 50);
    for (const passage of passages) expect(passage.length).toBeLessThanOrEqual(50);
    expect(passages.join(" ").replace(/x (?=x)/g, "x")).toBe(text);
  });

  it("keeps a heading with the passage that follows it", () => {
    const text = ["Opening hours", paragraph(1, 2), "Prices", paragraph(3, 2), "Emergencies", paragraph(5, 12)].join("\n\n");
    const passages = splitPassages(text, 200);
    for (const passage of passages) expect(passage.length).toBeLessThanOrEqual(200);
    expect(words(passages.join(" "))).toEqual(words(text));
    for (const heading of ["Opening hours", "Prices", "Emergencies"]) {
      const holder = passages.find((p) => p.includes(heading))!;
      expect(holder.startsWith(heading)).toBe(true);
      expect(holder.length).toBeGreaterThan(heading.length);
    }
    // No passage ends on a heading.
    for (const passage of passages) expect(passage).toMatch(/\.$/);
  });

  it("drops empty passages and normalises whitespace", () => {
    expect(splitPassages("")).toEqual([]);
    expect(splitPassages(" \n\n \r\n\t")).toEqual([]);
    expect(splitPassages("  a  b \r\n\r\n\r\n c ")).toEqual(["a b\n\nc"]);
  });

  it.each(["word ", "x", "a. ", '""" ', "Heading\n\n"])("splits 2 MB of the pattern %j, every passage bounded", (pattern) => {
    const passages = splitPassages(pattern.repeat(Math.ceil((2 * 1024 * 1024) / pattern.length)));
    expect(passages.every((passage) => passage.length <= 800 && passage.length > 0)).toBe(true);
  });

  it("refuses a passage length too small to hold a heading and a sentence piece", () => {
    expect(() => splitPassages("text", 10)).toThrow(RangeError);
  });
});
