import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/core/ids.js";
import { nowIso } from "../../src/core/time.js";
import { KNOWLEDGE_LIMITS } from "../../src/services/knowledge-bases.js";
import { errorOf, startTestApp, type ApiResponse, type TestAccount, type TestApp } from "../helpers/test-app.js";

// Knowledge bases (issue 31): storage, the REST API and full-text search, over real HTTP, on
// SQLite (other lane) and PostgreSQL (postgres lane).

let app: TestApp;
let acct: TestAccount;
let other: TestAccount;

beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account();
  other = await app.account();
});
afterAll(async () => {
  await app.close();
});

const HOURS_TXT = `Opening hours

The clinic is open Monday to Friday from 8 am to 6 pm, and on Saturday mornings from 9 am to noon.
We are closed on Sundays and on public holidays.`;

const PARKING_MD = `# Parking

Free **parking** for patients is available behind the building, with the entrance on Elm Street.
Bicycles can be locked to the racks by the front door.`;

const PRICES_HTML = `<!doctype html><html><head><title>Prices</title><script>var tracking = "whitening";</script></head>
<body><h1>Prices</h1><p>A teeth whitening session costs 250 dollars.</p>
<p>A routine cleaning costs 90 dollars and is covered by most insurance plans.</p></body></html>`;

/** A one-page PDF showing `text` in Helvetica, its cross-reference table at the right offsets. */
function onePagePdf(text: string): Buffer {
  const content = `BT /F1 12 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let pdf = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(pdf.length);
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, "latin1");
}

const createBase = (body: unknown, key = acct.key) => app.request("POST", "/v1/knowledge-bases", { key, body });

/** Uploads bytes as they are (the test app's request helper sends strings only). */
async function upload(kbId: string, name: string, type: string, body: string | Buffer, key = acct.key): Promise<ApiResponse> {
  const res = await fetch(`${app.baseUrl}/v1/knowledge-bases/${kbId}/documents?name=${encodeURIComponent(name)}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": type },
    body,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body: parsed as any };
}

const search = (kbId: string, query: unknown, key = acct.key, limit?: number) =>
  app.request("POST", `/v1/knowledge-bases/${kbId}/search`, { key, body: { query, ...(limit === undefined ? {} : { limit }) } });

describe("knowledge bases and their documents", () => {
  let kb: string;
  const docs: Record<string, string> = {};

  beforeAll(async () => {
    const res = await createBase({ name: "Clinic", description: "What callers ask" });
    expect(res.status).toBe(201);
    kb = res.body.id;
  });

  it("creates, gets and lists a knowledge base", async () => {
    expect(kb).toMatch(/^kb_/);
    const got = await app.request("GET", `/v1/knowledge-bases/${kb}`, { key: acct.key });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: kb, name: "Clinic", description: "What callers ask" });
    expect(Object.keys(got.body).sort()).toEqual(["created_at", "description", "id", "name", "updated_at"]);
    const list = await app.request("GET", "/v1/knowledge-bases", { key: acct.key });
    expect(list.status).toBe(200);
    expect(list.body.data.map((b: { id: string }) => b.id)).toContain(kb);
    expect(list.body).toMatchObject({ has_more: false, next_cursor: null });
  });

  it("refuses a knowledge base without a name, or with unknown fields", async () => {
    expect((await createBase({})).status).toBe(400);
    const extra = await createBase({ name: "x", colour: "red" });
    expect(extra.status).toBe(400);
    expect(errorOf(extra).code).toBe("invalid_request");
  });

  it("stores text, Markdown and HTML documents cut into passages", async () => {
    for (const [name, type, body] of [
      ["hours.txt", "text/plain; charset=utf-8", HOURS_TXT],
      ["parking.md", "text/markdown", PARKING_MD],
      ["prices.html", "text/html; charset=UTF-8", PRICES_HTML],
    ] as const) {
      const res = await upload(kb, name, type, body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(["bytes", "content_type", "created_at", "id", "knowledge_base_id", "name", "passages"]);
      expect(res.body).toMatchObject({ knowledge_base_id: kb, name, content_type: type.split(";")[0], bytes: Buffer.byteLength(body) });
      expect(res.body.passages).toBeGreaterThanOrEqual(1);
      expect(res.body.id).toMatch(/^kbdoc_/);
      docs[name] = res.body.id;
      const rows = await app.parley.services.db.selectFrom("kb_passages").selectAll().where("document_id", "=", res.body.id).execute();
      expect(rows).toHaveLength(res.body.passages);
      expect(rows.every((r) => r.account_id === acct.id && r.knowledge_base_id === kb)).toBe(true);
    }
    const list = await app.request("GET", `/v1/knowledge-bases/${kb}/documents`, { key: acct.key });
    expect(list.status).toBe(200);
    expect(list.body.data.map((d: { name: string }) => d.name).sort()).toEqual(["hours.txt", "parking.md", "prices.html"]);
    expect(list.body.total).toBe(3);
  });

  it("finds the passage that answers a question worded differently, best first", async () => {
    const cases = [
      ["Are you opened on Saturdays?", "hours.txt", /Saturday/],
      ["where could I park the car", "parking.md", /parking/],
      ["How much is whitening my teeth?", "prices.html", /whitening session costs 250/],
    ] as const;
    for (const [question, document, text] of cases) {
      const res = await search(kb, question);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const [best] = res.body.data;
      expect(best, question).toBeDefined();
      expect(best).toMatchObject({ document_id: docs[document], document_name: document, knowledge_base_id: kb });
      // The best passage is the document's; the words asked about are in one of its passages found.
      expect(res.body.data.some((h: { text: string }) => text.test(h.text)), JSON.stringify(res.body.data)).toBe(true);
      expect(best.score).toBeGreaterThan(0);
      const scores = res.body.data.map((h: { score: number }) => h.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
    }
  });

  it("keeps no script of an HTML document: a word only in its script finds nothing there", async () => {
    const res = await search(kb, "tracking");
    expect(res.body.data).toEqual([]);
  });

  it("finds nothing for a question about nothing in the documents", async () => {
    // Observed: no passage at all (every word of the question is absent or a stop word).
    const res = await search(kb, "Do you sell pizza delivery?");
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect((await search(kb, "what is it?")).body.data).toEqual([]);
  });

  it("answers at most `limit` passages", async () => {
    const res = await search(kb, "parking whitening saturday", acct.key, 2);
    expect(res.body.data).toHaveLength(2);
    expect((await search(kb, "x", acct.key, 21)).status).toBe(400);
  });

  it("does not error on hostile search strings: quotes, NEAR, *, :, (, -, SQL", async () => {
    const hostile = [
      '"',
      '"unbalanced quote',
      "NEAR(parking street, 2)",
      "park*",
      "*",
      "text:parking",
      "{text}: parking",
      "(parking",
      ")",
      "-parking",
      "parking -street",
      "^parking",
      "parking AND OR NOT",
      "NOT",
      "'; DROP TABLE kb_passages; --",
      "parking' OR '1'='1",
      "parking & | ! <-> :* ''",
      "\u0001parking\u007f",
      "ünïcödé café 停车",
      "a".repeat(1000),
      "parking ".repeat(125),
    ];
    for (const query of hostile) {
      const res = await search(kb, query);
      expect(res.status, `${JSON.stringify(query)}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(Array.isArray(res.body.data)).toBe(true);
    }
    // The words around the syntax still count.
    expect((await search(kb, "NEAR(parking street, 2)")).body.data[0]?.document_name).toBe("parking.md");
    expect(await app.parley.services.db.selectFrom("kb_passages").select("id").where("knowledge_base_id", "=", kb).execute()).not.toHaveLength(0);
  });

  it("searches through the service as the dialogue will: several bases, ids of other accounts ignored", async () => {
    const { knowledgeBases } = app.parley.services;
    const hits = await knowledgeBases.search(acct.id, [kb, "kb_doesnotexist"], "Saturday opening");
    expect(hits[0]).toMatchObject({ document_name: "hours.txt", knowledge_base_id: kb });
    expect(await knowledgeBases.search(other.id, [kb], "Saturday opening")).toEqual([]);
    expect(await knowledgeBases.search(acct.id, [], "Saturday opening")).toEqual([]);
    expect(await knowledgeBases.search(acct.id, [kb], "")).toEqual([]);
  });

  it("keeps other accounts out: 404 on every operation, and their searches find nothing", async () => {
    const key = other.key;
    expect((await app.request("GET", `/v1/knowledge-bases/${kb}`, { key })).status).toBe(404);
    expect(errorOf(await app.request("GET", `/v1/knowledge-bases/${kb}`, { key })).code).toBe("knowledge_base_not_found");
    expect((await app.request("GET", `/v1/knowledge-bases/${kb}/documents`, { key })).status).toBe(404);
    expect((await search(kb, "parking", key)).status).toBe(404);
    expect((await upload(kb, "mine.txt", "text/plain", "Parking is free.", key)).status).toBe(404);
    expect((await app.request("DELETE", `/v1/knowledge-bases/${kb}/documents/${docs["parking.md"]}`, { key })).status).toBe(404);
    expect((await app.request("DELETE", `/v1/knowledge-bases/${kb}`, { key })).status).toBe(404);
    const theirs = await app.request("GET", "/v1/knowledge-bases", { key });
    expect(theirs.body.data).toEqual([]);
    // Their own knowledge base, with the same words, never answers with ours (nor ours with theirs).
    const own = (await createBase({ name: "Theirs" }, key)).body.id;
    expect((await upload(own, "p.txt", "text/plain", "Parking costs 5 dollars an hour.", key)).status).toBe(201);
    const found = await search(own, "parking", key, 20);
    expect(found.body.data.map((h: { knowledge_base_id: string }) => h.knowledge_base_id)).toEqual([own]);
    const ours = await search(kb, "parking dollars", acct.key, 20);
    expect(ours.body.data.every((h: { knowledge_base_id: string }) => h.knowledge_base_id === kb)).toBe(true);
    // Still there for their owner.
    expect((await app.request("GET", `/v1/knowledge-bases/${kb}`, { key: acct.key })).status).toBe(200);
  });

  it("needs knowledge:read to read and search, knowledge:write to change", async () => {
    const reader = await app.key(acct.id, ["knowledge:read"]);
    const none = await app.key(acct.id, ["agents:read"]);
    expect((await app.request("GET", `/v1/knowledge-bases/${kb}`, { key: reader })).status).toBe(200);
    expect((await search(kb, "parking", reader)).status).toBe(200);
    expect((await createBase({ name: "x" }, reader)).status).toBe(403);
    expect((await upload(kb, "x.txt", "text/plain", "x", reader)).status).toBe(403);
    expect((await app.request("DELETE", `/v1/knowledge-bases/${kb}/documents/${docs["hours.txt"]}`, { key: reader })).status).toBe(403);
    expect((await app.request("GET", "/v1/knowledge-bases", { key: none })).status).toBe(403);
    expect((await search(kb, "parking", none)).status).toBe(403);
  });

  it("refuses types it cannot read (415), no body (400), and documents over 5 MiB (413)", async () => {
    for (const type of ["application/json", "image/png", "application/octet-stream", "text/csv", "multipart/form-data; boundary=x"]) {
      const res = await upload(kb, "bad", type, "hello");
      expect(res.status, type).toBe(415);
      expect(errorOf(res).code).toBe("unsupported_media_type");
    }
    const empty = await upload(kb, "empty.txt", "text/plain", "");
    expect(empty.status).toBe(400);
    const noName = await fetch(`${app.baseUrl}/v1/knowledge-bases/${kb}/documents`, { method: "POST", headers: { authorization: `Bearer ${acct.key}`, "content-type": "text/plain" }, body: "x" });
    expect(noName.status).toBe(400);
    const big = await upload(kb, "big.txt", "text/plain", Buffer.alloc(KNOWLEDGE_LIMITS.documentBytes + 1, "a"));
    expect(big.status).toBe(413);
    expect(errorOf(big).code).toBe("payload_too_large");
    const list = await app.request("GET", `/v1/knowledge-bases/${kb}/documents`, { key: acct.key });
    expect(list.body.total).toBe(3);
  });

  it("answers 400 invalid_document with a reason for a document no text can be read from", async () => {
    const res = await upload(kb, "broken.pdf", "application/pdf", Buffer.from("%PDF-1.4 this is not really a pdf"));
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe("invalid_document");
    expect(errorOf(res).message.length).toBeGreaterThan(0);
  });

  it("reads a PDF and finds its text", async () => {
    const res = await upload(kb, "insurance.pdf", "application/pdf", onePagePdf("We accept dental insurance from Delta and Cigna."));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ content_type: "application/pdf", passages: 1 });
    const found = await search(kb, "Do you take Cigna insurance?");
    expect(found.body.data[0]).toMatchObject({ document_id: res.body.id, document_name: "insurance.pdf" });
    expect(found.body.data[0].text).toContain("Delta and Cigna");
    expect((await app.request("DELETE", `/v1/knowledge-bases/${kb}/documents/${res.body.id}`, { key: acct.key })).status).toBe(200);
  });

  it("deletes a document: its passages leave the search at once", async () => {
    expect((await search(kb, "where could I park the car")).body.data[0]?.document_name).toBe("parking.md");
    const res = await app.request("DELETE", `/v1/knowledge-bases/${kb}/documents/${docs["parking.md"]}`, { key: acct.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: docs["parking.md"], deleted: true });
    const after = await search(kb, "where could I park the car", acct.key, 20);
    expect(after.body.data.map((h: { document_id: string }) => h.document_id)).not.toContain(docs["parking.md"]);
    expect(await app.parley.services.db.selectFrom("kb_passages").select("id").where("document_id", "=", docs["parking.md"]!).execute()).toEqual([]);
    const again = await app.request("DELETE", `/v1/knowledge-bases/${kb}/documents/${docs["parking.md"]}`, { key: acct.key });
    expect(again.status).toBe(404);
    expect(errorOf(again).code).toBe("document_not_found");
  });

  it("deletes a knowledge base with its documents and passages", async () => {
    const base = (await createBase({ name: "Short-lived" })).body.id;
    const doc = await upload(base, "gone.txt", "text/plain", "The aquarium in the waiting room holds seven goldfish.");
    expect(doc.status).toBe(201);
    expect((await search(base, "goldfish")).body.data).toHaveLength(1);
    const res = await app.request("DELETE", `/v1/knowledge-bases/${base}`, { key: acct.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: base, deleted: true });
    expect((await app.request("GET", `/v1/knowledge-bases/${base}`, { key: acct.key })).status).toBe(404);
    expect(await app.parley.services.knowledgeBases.search(acct.id, [base], "goldfish")).toEqual([]);
    const db = app.parley.services.db;
    expect(await db.selectFrom("kb_passages").select("id").where("knowledge_base_id", "=", base).execute()).toEqual([]);
    expect(await db.selectFrom("kb_documents").select("id").where("knowledge_base_id", "=", base).execute()).toEqual([]);
  });
});

describe("limits", () => {
  it("holds at most 20 knowledge bases per account (409 knowledge_base_limit_reached)", async () => {
    const owner = await app.account();
    for (let i = 0; i < KNOWLEDGE_LIMITS.basesPerAccount; i++) expect((await createBase({ name: `kb ${i}` }, owner.key)).status).toBe(201);
    const over = await createBase({ name: "one too many" }, owner.key);
    expect(over.status).toBe(409);
    expect(errorOf(over).code).toBe("knowledge_base_limit_reached");
    const list = await app.request("GET", "/v1/knowledge-bases?limit=5", { key: owner.key });
    expect(list.body).toMatchObject({ total: 20, has_more: true });
  });

  it("holds at most 200 documents per knowledge base and 20,000 passages per account (409)", async () => {
    const owner = await app.account();
    const kb = (await createBase({ name: "Full" }, owner.key)).body.id;
    const db = app.parley.services.db;
    // Rows written directly stand for uploads made earlier (uploading 200 over HTTP proves nothing more).
    const at = nowIso();
    const row = (passages: number) => ({ id: newId("kbDocument"), knowledge_base_id: kb, account_id: owner.id, name: "earlier.txt", content_type: "text/plain", bytes: 1, passages, created_at: at });
    await db.insertInto("kb_documents").values(Array.from({ length: KNOWLEDGE_LIMITS.documentsPerBase - 1 }, () => row(0))).execute();
    const last = await upload(kb, "200th.txt", "text/plain", "The two hundredth document.", owner.key);
    expect(last.status).toBe(201);
    const over = await upload(kb, "201st.txt", "text/plain", "One too many.", owner.key);
    expect(over.status).toBe(409);
    expect(errorOf(over).code).toBe("document_limit_reached");

    const second = (await createBase({ name: "Second" }, owner.key)).body.id;
    await db.insertInto("kb_documents").values({ ...row(KNOWLEDGE_LIMITS.passagesPerAccount - 2), knowledge_base_id: second }).execute();
    // The account now holds 19,999 passages: one more fits, two do not.
    expect((await upload(second, "one.txt", "text/plain", "One passage.", owner.key)).status).toBe(201);
    const full = await upload(second, "another.txt", "text/plain", "Another passage.", owner.key);
    expect(full.status).toBe(409);
    expect(errorOf(full)).toMatchObject({ code: "passage_limit_reached", details: { passages: 1, held: KNOWLEDGE_LIMITS.passagesPerAccount, limit: KNOWLEDGE_LIMITS.passagesPerAccount } });
  });
});
