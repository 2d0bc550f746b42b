import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdmin } from "../helpers/admin-cli.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

let app: TestApp;
let first: TestAccount;
let second: TestAccount;

beforeAll(async () => {
  app = await startTestApp();
  first = await app.account();
  second = await app.account();
});
afterAll(async () => {
  await app.close();
});

const admin = (...args: string[]) => runAdmin(app.config, ...args);

async function adminJson(...args: string[]): Promise<any> {
  const res = await admin(...args, "--json");
  expect(res.stderr).toBe("");
  expect(res.code).toBe(0);
  return JSON.parse(res.stdout);
}

const claim = async (who: TestAccount, phone_number: string) => {
  const res = await app.request("POST", "/v1/phone-numbers", { key: who.key, body: { phone_number, country: "US" } });
  expect(res.status).toBe(201);
  expect(res.body.status).toBe("pending");
  return res.body as { id: string; phone_number: string };
};

const statusSeenBy = async (who: TestAccount, id: string) => (await app.request("GET", `/v1/phone-numbers/${id}`, { key: who.key })).body.status;

describe("parley admin number list, approve, reject", () => {
  it("lists pending claims, approves one of several by number and account, and refuses to approve a second holder", async () => {
    const number = "+14155550161";
    const mine = await claim(first, number);
    const theirs = await claim(second, number);

    const pending = await adminJson("number", "list", "--status", "pending", "--number", number);
    expect(pending).toEqual([
      { id: mine.id, account_id: first.id, phone_number: number, country: "US", carrier: app.config.carrier, status: "pending", approved_at: null, active_in_account: null, created_at: expect.any(String) },
      { id: theirs.id, account_id: second.id, phone_number: number, country: "US", carrier: app.config.carrier, status: "pending", approved_at: null, active_in_account: null, created_at: expect.any(String) },
    ]);

    const ambiguous = await admin("number", "approve", number);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain("2 accounts have +14155550161");
    expect(ambiguous.stderr).toContain("--account");

    const approved = await adminJson("number", "approve", number, "--account", first.id);
    expect(approved).toMatchObject({ id: mine.id, account_id: first.id, status: "active", active_in_account: null });
    expect(approved.approved_at).toEqual(expect.any(String));
    expect(await statusSeenBy(first, mine.id)).toBe("active");
    expect(await statusSeenBy(second, theirs.id)).toBe("pending");

    // The other claim shows who holds the number, and cannot be approved while they do.
    const listed = await adminJson("number", "list", "--account", second.id);
    expect(listed).toEqual([expect.objectContaining({ id: theirs.id, status: "pending", active_in_account: first.id })]);
    const secondHolder = await admin("number", "approve", theirs.id);
    expect(secondHolder.code).toBe(2);
    expect(secondHolder.stderr).toContain(`active in account ${first.id}`);
    expect(secondHolder.stderr).toContain("phone_number_in_use");
    expect(await statusSeenBy(second, theirs.id)).toBe("pending");
  });

  it("rejects a claim and revokes an active number: the account cannot bring either back", async () => {
    const claimed = await claim(first, "+14155550162");
    const human = await admin("number", "reject", claimed.id);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^status\s+inactive$/m);
    expect(await statusSeenBy(first, claimed.id)).toBe("inactive");

    const held = await claim(second, "+14155550163");
    await adminJson("number", "approve", held.id);
    expect((await app.parley.services.phoneNumbers.findActiveAnywhere(held.phone_number))?.id).toBe(held.id);
    const revoked = await adminJson("number", "reject", held.phone_number);
    expect(revoked).toMatchObject({ id: held.id, status: "inactive", approved_at: null });
    expect(await app.parley.services.phoneNumbers.findActiveAnywhere(held.phone_number)).toBeUndefined();

    for (const [who, id] of [[first, claimed.id], [second, held.id]] as const) {
      const back = await app.request("PATCH", `/v1/phone-numbers/${id}`, { key: who.key, body: { status: "active" } });
      expect(back.status).toBe(409);
      expect(back.body.error.code).toBe("phone_number_not_approved");
    }
  });

  it.each([
    [["number", "approve"], "give one number id or +E164 number"],
    [["number", "approve", "pn_a", "pn_b"], "give one number id or +E164 number"],
    [["number", "approve", "pn_doesnotexist"], "no phone number pn_doesnotexist"],
    [["number", "approve", "+14155550169"], "no pending +14155550169"],
    [["number", "reject", "+14155550169"], "no pending or active +14155550169"],
    [["number", "list", "--status", "sold"], "--status must be one of active, pending, inactive"],
  ])("refuses %j with exit code 2 saying %s", async (args, message) => {
    const res = await admin(...args);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe("");
    expect(res.stderr).toContain(message);
  });

  it("keeps an approval to one account: an id of another account named with --account is refused", async () => {
    const claimed = await claim(second, "+14155550164");
    const res = await admin("number", "approve", claimed.id, "--account", first.id);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`no phone number ${claimed.id} in account ${first.id}`);
    expect(await statusSeenBy(second, claimed.id)).toBe("pending");
  });
});
