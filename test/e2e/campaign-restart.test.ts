import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { runCliJson, startServer } from "../../scripts/parley-process.js";
import { cliAccount } from "../helpers/cli-account.js";

// A service process killed with SIGKILL while a campaign runs, then started again: every
// contact ends called exactly once, none lost, and the calls live at the kill are settled by
// the start-up recovery (failed, reason `interrupted`: not dialled again).

describe("a campaign across a SIGKILL of the service", () => {
  it("calls every contact exactly once", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "parley-e2e-"));
    const env = { PARLEY_DATA_DIR: dataDir, PARLEY_ENGINE: "1", PARLEY_CAMPAIGN_POLL_MS: "50" };
    const { id: accountId, api } = await cliAccount(env, { credits: 100 });
    await runCliJson(["admin", "number", "add", "--account", accountId, "--number", "+16505551234", "--country", "US"], env);
    const db = new Database(path.join(dataDir, "parley.db"), { readonly: true, fileMustExist: true });
    try {
      let server = await startServer(env);
      const agent = await api(server.baseUrl, "POST", "/v1/agents", { name: "Ava", system_prompt: "You call customers.", voice_id: "flite-kal", first_message: "Hello, this is Ava." });
      // Two callees who talk (the simulator's default script: the call lasts several seconds), then ones who answer and hang up, or are busy.
      const contacts = [
        { phone: "+14155550101" },
        { phone: "+14155550102" },
        ...Array.from({ length: 10 }, (_, i) => ({ phone: `+1500555${1 + (i % 2) * 2}${String(i).padStart(3, "0")}` })),
      ];
      const created = await api(server.baseUrl, "POST", "/v1/campaigns", { name: "Restart", agent_id: agent.body.id, contacts, settings: { max_concurrent: 3, calling_hours: { start: "00:00", end: "24:00" } } });
      expect(created.status).toBe(201);
      const campaignId = created.body.id as string;

      // Kill while both talking calls are live and contacts are still waiting.
      const liveTalks = () => (db.prepare("SELECT count(*) AS n FROM calls WHERE status = 'in_progress' AND phone_number LIKE '+1415%'").get() as { n: number }).n;
      const end = Date.now() + 30_000;
      while (liveTalks() < 2) {
        if (Date.now() > end) throw new Error("the talking calls never went live together");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(await server.stop("SIGKILL")).toBeNull();
      const atKill = db.prepare("SELECT status, count(*) AS n FROM campaign_contacts WHERE campaign_id = ? GROUP BY status").all(campaignId) as Array<{ status: string; n: number }>;
      expect(atKill.find((r) => r.status === "pending")?.n ?? 0).toBeGreaterThan(0);
      const liveAtKill = (db.prepare("SELECT contact_id FROM calls WHERE campaign_id = ? AND status IN ('ringing', 'in_progress')").all(campaignId) as Array<{ contact_id: string }>).map((r) => r.contact_id);
      expect(liveAtKill.length).toBeGreaterThanOrEqual(2);

      server = await startServer(env);
      const done = Date.now() + 60_000;
      let campaign = (await api(server.baseUrl, "GET", `/v1/campaigns/${campaignId}`)).body;
      while (campaign.status !== "completed") {
        if (Date.now() > done) throw new Error(`not completed after restart: ${JSON.stringify(campaign.contacts)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        campaign = (await api(server.baseUrl, "GET", `/v1/campaigns/${campaignId}`)).body;
      }
      // Exactly one call per contact: none twice, none lost.
      const perContact = db.prepare("SELECT contact_id, count(*) AS n FROM calls WHERE campaign_id = ? GROUP BY contact_id").all(campaignId) as Array<{ n: number }>;
      expect(perContact).toHaveLength(12);
      expect(perContact.every((r) => r.n === 1)).toBe(true);
      // The calls live at the kill failed (interrupted); every other contact got its callee's answer.
      const listed = (await api(server.baseUrl, "GET", `/v1/campaigns/${campaignId}/contacts`)).body.data as Array<{ id: string; phone: string; status: string; reason: string | null; calls: Array<{ status: string }> }>;
      for (const contact of listed) {
        if (liveAtKill.includes(contact.id)) expect(contact).toMatchObject({ status: "failed", reason: "interrupted", calls: [{ status: "failed" }] });
        else expect(contact.status).toBe(contact.phone.startsWith("+15005553") ? "busy" : "completed");
      }
      expect(campaign.contacts).toMatchObject({ total: 12, pending: 0, calling: 0, failed: liveAtKill.length });
      expect(await server.stop("SIGTERM")).toBe(0);
    } finally {
      db.close();
    }
  }, 120_000);
});
