import { createDeflate, deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { DOCUMENT_READ_LIMITS } from "../../../src/services/document-read-limits.js";
import { activeReaders, readDocument } from "../../../src/services/document-reader.js";
import { DocumentTextError, documentText } from "../../../src/services/document-text.js";

/**
 * A hand-written PDF: `pages` page objects that all draw the one content stream `content`
 * (deflated), in Helvetica. Sharing the stream makes a small file that is a lot of work to read.
 */
function makePdf(content: Buffer, pages = 1): Buffer {
  const objects: (string | Buffer)[] = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${Array.from({ length: pages }, (_, i) => `${5 + i} 0 R`).join(" ")}] /Count ${pages} >>`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    Buffer.concat([Buffer.from(`<< /Length ${content.length} /Filter /FlateDecode >>\nstream\n`, "latin1"), content, Buffer.from("\nendstream", "latin1")]),
  ];
  for (let i = 0; i < pages; i++) {
    objects.push("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>");
  }
  const chunks: Buffer[] = [Buffer.from("%PDF-1.4\n", "latin1")];
  let size = chunks[0]!.length;
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(size);
    const chunk = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`, "latin1"), typeof object === "string" ? Buffer.from(object, "latin1") : object, Buffer.from("\nendobj\n", "latin1")]);
    chunks.push(chunk);
    size += chunk.length;
  });
  const table = offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("");
  chunks.push(Buffer.from(`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${table}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${size}\n%%EOF\n`, "latin1"));
  return Buffer.concat(chunks);
}

/** Text lines 14 points apart (an empty one a blank line's gap), deflated. */
const lines = (texts: string[]): Buffer => deflateSync(texts.map((t, n) => (t ? `BT /F1 12 Tf 72 ${720 - 14 * n} Td (${t}) Tj ET` : "")).join("\n"));

/** `runs` one-word text runs in one text object: pdf.js's text extraction works through each. */
const tinyRuns = (runs: number): Buffer => deflateSync(`BT /F1 1 Tf\n${Array.from({ length: runs }, (_, k) => `${k % 500} ${k % 700} Td (w${k % 10}) Tj`).join("\n")}\nET`);

/** One text line followed by `mib` MiB of spaces, deflated to about a thousandth of that. */
async function inflatingStream(mib: number): Promise<Buffer> {
  const deflate = createDeflate({ level: 1 });
  const out: Buffer[] = [];
  deflate.on("data", (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => deflate.on("end", resolve));
  deflate.write("BT /F1 12 Tf 72 720 Td (Hello) Tj ET\n");
  const spaces = Buffer.alloc(1 << 20, 0x20);
  for (let i = 0; i < mib; i++) deflate.write(spaces);
  deflate.end();
  await ended;
  return Buffer.concat(out);
}

const failure = (promise: Promise<unknown>): Promise<unknown> => promise.then(() => undefined, (e: unknown) => e);

describe("readDocument", () => {
  it("gives the same text as documentText for Markdown, HTML, plain text and a PDF", async () => {
    const documents: [Buffer, "text/markdown" | "text/html" | "text/plain" | "application/pdf"][] = [
      [Buffer.from("# Bright Smile\n\nOpen **Monday** to _Friday_, see [our hours](https://example.test/h).\n\n- Whitening\n- Check-ups\n"), "text/markdown"],
      [Buffer.from("<p>Call us &amp; book.</p><script>secret()</script><p>Closed Sundays.</p>"), "text/html"],
      [Buffer.from("\ufeffOpening hours\r\n\r\nNine to five."), "text/plain"],
      [makePdf(lines(["Bright Smile Dental", "", "We are open Monday to Friday,", "from 9 am to 5 pm."]), 2), "application/pdf"],
    ];
    for (const [bytes, type] of documents) {
      const expected = await documentText(bytes, type);
      expect(await readDocument(bytes, type)).toBe(expected);
    }
    expect(await readDocument(documents[3]![0], "application/pdf")).toBe(["Bright Smile Dental", "We are open Monday to Friday, from 9 am to 5 pm.", "Bright Smile Dental", "We are open Monday to Friday, from 9 am to 5 pm."].join("\n\n"));
  });

  it("leaves the caller's buffer intact", async () => {
    const bytes = Buffer.from("Kept as it was.");
    await readDocument(bytes, "text/plain");
    expect(bytes.toString()).toBe("Kept as it was.");
  });

  it("passes a DocumentTextError's message through: a broken PDF, a document with no text", async () => {
    const broken = await failure(readDocument(Buffer.from("%PDF-1.7\nnot really a pdf"), "application/pdf"));
    expect(broken).toBeInstanceOf(DocumentTextError);
    expect((broken as Error).message).toBe("the file could not be read as a PDF");
    const empty = await failure(readDocument(Buffer.from(" \n\t "), "text/plain"));
    expect(empty).toBeInstanceOf(DocumentTextError);
    expect((empty as Error).message).toBe("the document has no text");
  });

  it("terminates a reader past its time and says the document took too long", async () => {
    // 300 pages drawing one stream of 200,000 text runs: 450 KB that pdf.js needs minutes for.
    const slow = makePdf(tinyRuns(200_000), 300);
    const error = await failure(readDocument(slow, "application/pdf", { timeoutMs: 500 }));
    expect(error).toBeInstanceOf(DocumentTextError);
    expect((error as Error).message).toBe("the document took too long to read");
    // Settled only once the thread has exited.
    expect(activeReaders()).toBe(0);
    expect(await readDocument(Buffer.from("Next upload."), "text/plain")).toBe("Next upload.");
  }, 30_000);

  it("keeps the caller's event loop turning while a large document is read", async () => {
    // About 4.5 MB of Markdown list items with links and code: the Markdown reader is one
    // synchronous scan, so on this thread not one timer would fire until it finished.
    const markdown = Array.from({ length: 50_000 }, (_, k) => `- item *${k}* with [a link](https://example.test/${k}) and \`code\` &amp; more\n`).join("");
    let ticks = 0;
    const interval = setInterval(() => ticks++, 1);
    try {
      const text = await readDocument(Buffer.from(markdown), "text/markdown");
      expect(text.startsWith("item 0 with a link and code & more")).toBe(true);
    } finally {
      clearInterval(interval);
    }
    expect(ticks).toBeGreaterThanOrEqual(5);
  }, 30_000);

  it("refuses a text longer than 2,000,000 characters and keeps one of exactly that many", async () => {
    expect(DOCUMENT_READ_LIMITS.maxChars).toBe(2_000_000);
    expect((await readDocument(Buffer.from("a".repeat(2_000_000)), "text/plain")).length).toBe(2_000_000);
    const error = await failure(readDocument(Buffer.from("a".repeat(2_000_001)), "text/plain"));
    expect(error).toBeInstanceOf(DocumentTextError);
    expect((error as Error).message).toBe("the document's text is too long");
  }, 30_000);

  it("terminates a reader that outgrows its heap", async () => {
    const markdown = Array.from({ length: 50_000 }, (_, k) => `- item *${k}* with [a link](https://example.test/${k})\n`).join("");
    // 8 MB, not 16: under Node 24 (V8 13) this document's reading fits in 16 MB now and then.
    const error = await failure(readDocument(Buffer.from(markdown), "text/markdown", { maxHeapMb: 8 }));
    expect(error).toBeInstanceOf(DocumentTextError);
    expect((error as Error).message).toBe("the document needs too much memory to read");
    expect(activeReaders()).toBe(0);
  }, 30_000);

  it("terminates a reader of a PDF whose stream inflates past the memory bound (outside the V8 heap)", async () => {
    // 1 GiB of spaces after one line, in a 1 MB file: pdf.js holds the inflated bytes in an
    // ArrayBuffer, which the heap limit does not count; the process's resident memory does.
    const bomb = makePdf(await inflatingStream(1024));
    expect(bomb.length).toBeLessThan(5 * 1024 * 1024);
    const error = await failure(readDocument(bomb, "application/pdf", { maxHeapMb: 64 }));
    expect(error).toBeInstanceOf(DocumentTextError);
    expect((error as Error).message).toBe("the document needs too much memory to read");
    expect(activeReaders()).toBe(0);
  }, 60_000);
});
