import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NewAppointment } from "../../src/services/appointments.js";
import { errorOf, startTestApp, type ApiResponse, type TestAccount, type TestApp } from "../helpers/test-app.js";

let app: TestApp;
let acct: TestAccount;

const APPOINTMENT_FIELDS = [
  "agent_id",
  "call_id",
  "confirmed_at",
  "created_at",
  "customer_email",
  "customer_name",
  "customer_phone",
  "date",
  "duration_minutes",
  "id",
  "notes",
  "reminder_at",
  "reminder_call_id",
  "reminder_status",
  "service",
  "status",
  "time",
  "updated_at",
];

beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account();
});
afterAll(async () => {
  await app.close();
});

/** Books as the dialogue engine will. */
const book = (input: Partial<NewAppointment> = {}, accountId = acct.id) =>
  app.parley.services.appointments.create({ account_id: accountId, date: "2030-03-01", time: "10:30", ...input });
const fieldsOf = (res: ApiResponse) => errorOf(res).details.fields.map((f: { field: string }) => f.field);

describe("AppointmentsService.create (the dialogue engine's entry point)", () => {
  it("books with nulls for what is unknown and 30 minutes by default", async () => {
    const appointment = await book();
    expect(appointment.id).toMatch(/^apt_[0-9A-Za-z]{20}$/);
    const res = await app.request("GET", `/v1/appointments/${appointment.id}`, { key: acct.key });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(APPOINTMENT_FIELDS);
    expect(res.body).toEqual({
      id: appointment.id,
      call_id: null,
      agent_id: null,
      customer_name: null,
      customer_phone: null,
      customer_email: null,
      date: "2030-03-01",
      time: "10:30",
      service: null,
      duration_minutes: 30,
      notes: null,
      status: "scheduled",
      // No agent: no reminder.
      confirmed_at: null,
      reminder_at: null,
      reminder_status: null,
      reminder_call_id: null,
      created_at: appointment.created_at,
      updated_at: appointment.created_at,
    });
  });

  it("refuses values a booking cannot have", async () => {
    await expect(book({ date: "2030-02-30" })).rejects.toThrow("YYYY-MM-DD");
    await expect(book({ time: "24:00" })).rejects.toThrow("HH:MM");
    await expect(book({ duration_minutes: 1 })).rejects.toThrow("5 to 480");
  });
});

describe("GET /v1/appointments", () => {
  let lister: TestAccount;
  const ids: string[] = [];

  beforeAll(async () => {
    lister = await app.account();
    const days = ["2030-01-31", "2030-02-01", "2030-02-14", "2030-02-28", "2030-03-01", "2030-03-15"];
    for (const [i, date] of days.entries()) {
      const appointment = await book({ date, call_id: i % 2 === 0 ? "call_even" : "call_odd", customer_name: `Customer ${i}` }, lister.id);
      ids.push(appointment.id);
      // Bookings in one millisecond would tie; distinct creation times make the expected order exact.
      const at = `2026-01-01T00:00:0${i}.000Z`;
      await app.parley.services.db.updateTable("appointments").set({ created_at: at, updated_at: at }).where("id", "=", appointment.id).execute();
    }
    await app.request("POST", `/v1/appointments/${ids[2]}/cancel`, { key: lister.key });
    await app.parley.services.db.updateTable("appointments").set({ status: "completed" }).where("id", "=", ids[0]!).execute();
  });

  const list = async (qs: string) => {
    const res = await app.request("GET", `/v1/appointments?${qs}`, { key: lister.key });
    expect(res.status).toBe(200);
    return res.body as { data: Array<{ id: string }>; total: number; has_more: boolean; next_cursor: string | null };
  };
  const idsOf = (body: { data: Array<{ id: string }> }) => body.data.map((a) => a.id);

  it("lists the account's appointments newest first, as full objects", async () => {
    const body = await list("");
    expect(body).toMatchObject({ total: 6, has_more: false, next_cursor: null });
    expect(idsOf(body)).toEqual([...ids].reverse());
    expect(Object.keys(body.data[0]!).sort()).toEqual(APPOINTMENT_FIELDS);
  });

  it("walks every page to the end in both orders", async () => {
    for (const order of ["asc", "desc"] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const body = await list(`limit=4&order=${order}` + (cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""));
        expect(body.total).toBe(6);
        seen.push(...idsOf(body));
        cursor = body.has_more ? body.next_cursor : null;
      } while (cursor);
      expect(seen).toEqual(order === "asc" ? ids : [...ids].reverse());
    }
  });

  it("filters by status, call and appointment date (both ends inclusive)", async () => {
    expect(idsOf(await list("status=cancelled"))).toEqual([ids[2]]);
    expect(idsOf(await list("status=completed"))).toEqual([ids[0]]);
    expect((await list("status=scheduled")).total).toBe(4);
    expect(idsOf(await list("call_id=call_odd&order=asc"))).toEqual([ids[1], ids[3], ids[5]]);
    expect(idsOf(await list("from_date=2030-02-01&to_date=2030-03-01&order=asc"))).toEqual([ids[1], ids[2], ids[3], ids[4]]);
    expect(idsOf(await list("from_date=2030-03-02&order=asc"))).toEqual([ids[5]]);
    expect(idsOf(await list("to_date=2030-01-31"))).toEqual([ids[0]]);
    expect((await list("from_date=2030-03-01&to_date=2030-02-01")).total).toBe(0);
    expect(idsOf(await list("call_id=call_even&status=scheduled&to_date=2030-03-01"))).toEqual([ids[4]]);
  });

  it("pages within a filter, and refuses its cursor under another filter", async () => {
    const first = await list("call_id=call_even&limit=2");
    expect(first.has_more).toBe(true);
    const second = await list(`call_id=call_even&limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`);
    expect([...idsOf(first), ...idsOf(second)]).toEqual([ids[4], ids[2], ids[0]]);
    const other = await app.request("GET", `/v1/appointments?call_id=call_odd&limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`, { key: lister.key });
    expect(errorOf(other).code).toBe("invalid_cursor");
  });

  it.each([
    ["from_date=2030-13-01", "invalid_date_format", "from_date"],
    ["to_date=2030-02-30", "invalid_date_format", "to_date"],
    ["from_date=yesterday", "invalid_date_format", "from_date"],
    ["to_date=2030-03-01T00:00:00Z", "invalid_date_format", "to_date"],
    ["status=booked", "invalid_status", "status"],
    ["limit=0", "invalid_request", "limit"],
    ["agent=agent_x", "invalid_request", "agent"],
  ])("refuses ?%s with %s naming %s", async (qs, code, field) => {
    const res = await app.request("GET", `/v1/appointments?${qs}`, { key: lister.key });
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe(code);
    expect(errorOf(res).message).toContain(field);
    expect(fieldsOf(res)).toEqual([field]);
  });

  it("shows only the caller's appointments and needs appointments:read", async () => {
    const other = await app.account();
    expect((await app.request("GET", "/v1/appointments", { key: other.key })).body).toMatchObject({ total: 0, data: [] });
    const callsOnly = await app.key(lister.id, ["calls:read"]);
    const res = await app.request("GET", "/v1/appointments", { key: callsOnly });
    expect(res.status).toBe(403);
    expect(errorOf(res).code).toBe("forbidden");
  });
});

describe("PATCH /v1/appointments/{id}", () => {
  it("changes only the given fields, clears fields set to null, and moves updated_at", async () => {
    const appointment = await book({ service: "Cleaning", notes: "first visit", customer_name: "Ana", call_id: "call_1", agent_id: "agent_1" });
    const before = (await app.request("GET", `/v1/appointments/${appointment.id}`, { key: acct.key })).body;
    const res = await app.request("PATCH", `/v1/appointments/${appointment.id}`, {
      key: acct.key,
      body: {
        date: "2030-04-02",
        time: "09:05",
        duration_minutes: 45,
        notes: null,
        customer_email: "ana@example.com",
        customer_phone: "+14155550123",
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...before,
      date: "2030-04-02",
      time: "09:05",
      duration_minutes: 45,
      notes: null,
      customer_email: "ana@example.com",
      customer_phone: "+14155550123",
      updated_at: res.body.updated_at,
    });
    expect(res.body.updated_at > before.updated_at).toBe(true);
    expect((await app.request("GET", `/v1/appointments/${appointment.id}`, { key: acct.key })).body).toEqual(res.body);
  });

  it.each([
    [{ date: "2030-02-29" }, "invalid_date_format", "date"],
    [{ date: "03/01/2030" }, "invalid_date_format", "date"],
    [{ date: null }, "invalid_date_format", "date"],
    [{ time: "24:00" }, "invalid_request", "time"],
    [{ time: "9:30" }, "invalid_request", "time"],
    [{ duration_minutes: 4 }, "invalid_request", "duration_minutes"],
    [{ duration_minutes: 481 }, "invalid_request", "duration_minutes"],
    [{ duration_minutes: 30.5 }, "invalid_request", "duration_minutes"],
    [{ customer_email: "ana-at-example" }, "invalid_request", "customer_email"],
    [{ customer_phone: "555-0123" }, "invalid_phone_number", "customer_phone"],
    [{ customer_name: "   " }, "invalid_request", "customer_name"],
    [{ notes: "n".repeat(2001) }, "invalid_request", "notes"],
    [{ service: "s".repeat(201) }, "invalid_request", "service"],
    [{ status: "completed" }, "invalid_request", "status"],
    [{ call_id: "call_other" }, "invalid_request", "call_id"],
  ])("refuses %j with %s naming %s", async (body, code, field) => {
    const appointment = await book();
    const res = await app.request("PATCH", `/v1/appointments/${appointment.id}`, { key: acct.key, body });
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe(code);
    expect(errorOf(res).message).toContain(field);
    expect(fieldsOf(res)).toEqual([field]);
  });

  it("accepts the calendar's edges: 2032-02-29, 00:00, 23:59, 5 and 480 minutes", async () => {
    const appointment = await book();
    for (const body of [{ date: "2032-02-29", time: "00:00", duration_minutes: 5 }, { time: "23:59", duration_minutes: 480 }]) {
      const res = await app.request("PATCH", `/v1/appointments/${appointment.id}`, { key: acct.key, body });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject(body);
    }
  });

  it("refuses to change a cancelled appointment with 409 appointment_already_cancelled", async () => {
    const appointment = await book();
    await app.request("POST", `/v1/appointments/${appointment.id}/cancel`, { key: acct.key });
    const res = await app.request("PATCH", `/v1/appointments/${appointment.id}`, { key: acct.key, body: { time: "11:00" } });
    expect(res.status).toBe(409);
    expect(errorOf(res).code).toBe("appointment_already_cancelled");
    expect((await app.request("GET", `/v1/appointments/${appointment.id}`, { key: acct.key })).body.time).toBe("10:30");
  });
});

describe("POST /v1/appointments/{id}/cancel", () => {
  it("cancels once; a second cancel is 409 appointment_already_cancelled", async () => {
    const appointment = await book();
    const res = await app.request("POST", `/v1/appointments/${appointment.id}/cancel`, { key: acct.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: appointment.id, status: "cancelled", date: "2030-03-01", time: "10:30" });
    expect(res.body.updated_at > appointment.updated_at).toBe(true);
    const again = await app.request("POST", `/v1/appointments/${appointment.id}/cancel`, { key: acct.key });
    expect(again.status).toBe(409);
    expect(errorOf(again).code).toBe("appointment_already_cancelled");
  });

  it("needs appointments:write", async () => {
    const appointment = await book();
    const reader = await app.key(acct.id, ["appointments:read"]);
    const res = await app.request("POST", `/v1/appointments/${appointment.id}/cancel`, { key: reader });
    expect(res.status).toBe(403);
    expect(errorOf(res).code).toBe("forbidden");
    expect((await app.request("GET", `/v1/appointments/${appointment.id}`, { key: reader })).body.status).toBe("scheduled");
  });
});

describe("reaching an appointment by id", () => {
  it("answers 404 appointment_not_found for unknown ids and 403 unauthorized for another account's", async () => {
    const appointment = await book();
    const other = await app.account();
    const attempts = [
      ["GET", "", undefined],
      ["PATCH", "", { notes: "mine now" }],
      ["POST", "/cancel", undefined],
    ] as const;
    for (const [method, suffix, body] of attempts) {
      const missing = await app.request(method, `/v1/appointments/apt_doesnotexist${suffix}`, { key: acct.key, body });
      expect(missing.status).toBe(404);
      expect(errorOf(missing).code).toBe("appointment_not_found");
      const foreign = await app.request(method, `/v1/appointments/${appointment.id}${suffix}`, { key: other.key, body });
      expect(foreign.status).toBe(403);
      expect(errorOf(foreign).code).toBe("unauthorized");
    }
    const still = await app.request("GET", `/v1/appointments/${appointment.id}`, { key: acct.key });
    expect(still.body).toMatchObject({ status: "scheduled", notes: null });
  });
});
