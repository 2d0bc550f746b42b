import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeWav } from "../../engine/audio/wav.js";
import { loadCursorSecret } from "../../src/services/cursor-codec.js";
import { RECORDING_LINK_TTL_MS, RecordingLinks } from "../../src/services/recording-links.js";
import { insertCallRow } from "../helpers/call-rows.js";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

let app: TestApp;
let owner: TestAccount;
let agentId: string;
let wav: Buffer;

beforeAll(async () => {
  app = await startTestApp();
  owner = await app.account();
  agentId = (await app.request("POST", "/v1/agents", { key: owner.key, body: { name: "Rec", system_prompt: "You answer.", voice_id: "flite-slt" } })).body.id;
  wav = encodeWav({ samples: Int16Array.from({ length: 1600 }, (_, i) => Math.round(3000 * Math.sin(i / 5))), sampleRate: 8000, channels: 1 });
});

afterAll(async () => {
  await app?.close();
});

/** A finished call whose recording the engine stored at `recordings/<id>.wav`. */
async function recordedCall(account: TestAccount = owner): Promise<string> {
  const dir = path.join(app.dataDir, "recordings");
  mkdirSync(dir, { recursive: true });
  const row = await insertCallRow(app.parley.services.db, { account_id: account.id, agent_id: agentId, status: "completed", duration: 12 });
  const file = path.join(dir, `${row.id}.wav`);
  writeFileSync(file, wav);
  await app.parley.services.db.updateTable("calls").set({ recording_path: file }).where("id", "=", row.id).execute();
  return row.id;
}

describe("call recordings", () => {
  it("hand the owner an absolute, signed link that serves the WAV without a key", async () => {
    const id = await recordedCall();
    const read = await app.request("GET", `/v1/calls/${id}?include=recording`, { key: owner.key });
    expect(read.status).toBe(200);
    const url = new URL(read.body.recording_url);
    expect(url.origin + url.pathname).toBe(`${app.config.baseUrl}/v1/calls/${id}/recording`);
    expect(Number(url.searchParams.get("expires")) * 1000).toBeGreaterThan(Date.now() + RECORDING_LINK_TTL_MS - 60_000);

    const fetched = await fetch(`${app.baseUrl}${url.pathname}${url.search}`);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get("content-type")).toBe("audio/wav");
    expect(Buffer.from(await fetched.arrayBuffer()).equals(wav)).toBe(true);
    // A player seeking asks for a range: the bytes from there on.
    const ranged = await fetch(`${app.baseUrl}${url.pathname}${url.search}`, { headers: { range: "bytes=44-" } });
    expect(ranged.status).toBe(206);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(wav.subarray(44))).toBe(true);
  });

  it("refuse links whose signature was altered, or which were made for another call", async () => {
    const id = await recordedCall();
    const other = await recordedCall();
    const url = new URL((await app.request("GET", `/v1/calls/${id}?include=recording`, { key: owner.key })).body.recording_url);
    const signature = url.searchParams.get("signature")!;
    const tampered = signature.slice(0, -1) + (signature.endsWith("A") ? "B" : "A");
    for (const bad of [
      `/v1/calls/${id}/recording?expires=${url.searchParams.get("expires")}&signature=${tampered}`,
      `/v1/calls/${id}/recording?expires=${Number(url.searchParams.get("expires")) + 1}&signature=${signature}`,
      `/v1/calls/${other}/recording${url.search}`,
      `/v1/calls/${id}/recording`,
    ]) {
      const res = await fetch(app.baseUrl + bad);
      expect(res.status, bad).toBe(403);
      expect(((await res.json()) as any).error.code, bad).toBe("invalid_signature");
    }
  });

  it("refuse expired links", async () => {
    const id = await recordedCall();
    // A link made eight days ago, signed with the service's own secret.
    const old = new RecordingLinks(app.parley.services.db, loadCursorSecret(app.dataDir), app.baseUrl, () => Date.now() - 8 * 24 * 3600 * 1000);
    const res = await fetch(old.url({ id, recording_path: "x" })!);
    expect(res.status).toBe(403);
    expect(((await res.json()) as any).error.code).toBe("link_expired");
  });

  it("give no link for calls without a recording, and 404 for a link whose file is gone", async () => {
    const row = await insertCallRow(app.parley.services.db, { account_id: owner.id, agent_id: agentId });
    const read = await app.request("GET", `/v1/calls/${row.id}?include=recording`, { key: owner.key });
    expect(read.body.recording_url).toBeNull();
    const links = new RecordingLinks(app.parley.services.db, loadCursorSecret(app.dataDir), app.baseUrl);
    const res = await fetch(links.url({ id: row.id, recording_path: "/nonexistent.wav" })!);
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.code).toBe("recording_not_found");
  });

  it("are in the OpenAPI document, without the bearer key", async () => {
    const doc = (await app.request("GET", "/v1/openapi.json")).body;
    const op = doc.paths["/v1/calls/{call_id}/recording"].get;
    expect(op.security).toEqual([]);
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(["call_id", "expires", "signature"]);
    expect(Object.keys(op.responses["200"].content)).toEqual(["audio/wav"]);
  });

  it("give other accounts no link", async () => {
    const id = await recordedCall();
    const stranger = await app.account();
    const read = await app.request("GET", `/v1/calls/${id}?include=recording`, { key: stranger.key });
    expect(read.status).toBe(403);
    expect(errorOf(read).code).toBe("unauthorized");
  });
});
