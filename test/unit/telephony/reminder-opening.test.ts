import { describe, expect, it } from "vitest";
import type { AgentSettings } from "../../../engine/index.js";
import { fillTemplate } from "../../../engine/text/template.js";
import { reminderCall } from "../../../src/telephony/reminder-opening.js";
import { spokenFirstName, spokenName, spokenService } from "../../../src/telephony/spoken-appointment.js";

// What a reminder call says of its appointment: the name and service a key with
// appointments:write can write are spoken only when name-like, never as a sentence.

const agent = (metadata: Record<string, unknown> = {}): AgentSettings => ({ name: "Ava", metadata: { business_name: "Acme Dental", ...metadata } }) as unknown as AgentSettings;
const today = new Date(Date.UTC(2030, 2, 1));
const appointment = { date: "2030-03-04", time: "15:00", customer_name: "Ada Lovelace", service: "cleaning" };
const ATTACK = "cleaning. Your bank account is locked, press one to speak to our fraud team";

describe("reminder call opening", () => {
  it("speaks the name and service when they are name-like", () => {
    const { agent: running, context } = reminderCall(agent(), { purpose: "appointment_reminder", appointment: { id: "apt_1", date: "2030-03-04", time: "15:00", service: "cleaning" } }, appointment, today);
    expect(running.firstMessage).toBe("Hi Ada, this is Ava from Acme Dental, calling to remind you of your cleaning appointment on Monday, March 4 at 3:00 PM. Will you be able to make it?");
    expect(context).toMatchObject({ customer_name: "Ada Lovelace", service: "cleaning", appointment: { id: "apt_1", service: "cleaning" } });
  });

  it("never speaks an API-written sentence: not in the opening, the placeholders or the dialogue's context", () => {
    const forged = { ...appointment, customer_name: "Ada, your account is locked. Press one", service: ATTACK };
    const stored = { purpose: "appointment_reminder", customer_name: forged.customer_name, appointment: { id: "apt_1", date: "2030-03-04", time: "15:00", service: ATTACK } };
    const plain = reminderCall(agent(), stored, forged, today);
    expect(plain.agent.firstMessage).toBe("Hi, this is Ava from Acme Dental, calling to remind you of your appointment on Monday, March 4 at 3:00 PM. Will you be able to make it?");
    expect(JSON.stringify(plain.context)).not.toMatch(/locked|press one/i);
    // The engine fills the placeholders from the metadata and the context, as for first_message.
    const own = reminderCall(agent({ reminder_message: "Hello {{customer_name}}, your {{service}} visit is on {{appointment_date}}." }), stored, forged, today);
    expect(fillTemplate(own.agent.firstMessage!, { ...own.agent.metadata, ...own.context })).toBe("Hello, your visit is on Monday, March 4.");
  });

  it("says a service only in the agent's own spelling when the agent lists its services", () => {
    const listed = agent({ services: ["Teeth whitening", { name: "Cleaning", duration_minutes: 30 }] });
    expect(reminderCall(listed, {}, { ...appointment, service: "teeth  WHITENING" }, today).agent.firstMessage).toContain("your Teeth whitening appointment");
    expect(reminderCall(listed, {}, { ...appointment, service: "bank account check" }, today).agent.firstMessage).toContain("your appointment on");
  });
});

describe("spoken appointment fields", () => {
  it("keep names of a few words of letters, and short service phrases", () => {
    expect(spokenName("Zoë O'Brien-Smith")).toBe("Zoë O'Brien-Smith");
    expect(spokenFirstName("  Ada   Lovelace ")).toBe("Ada");
    expect(spokenName("Ada Lovelace Byron King Noel")).toBeNull();
    expect(spokenName("Ada.")).toBeNull();
    expect(spokenName("A".repeat(61))).toBeNull();
    expect(spokenService("root canal", {})).toBe("root canal");
    expect(spokenService("a b c d e f", {})).toBeNull();
    expect(spokenService("x".repeat(41), {})).toBeNull();
    expect(spokenService("cleaning: call +1 555 0100!", {})).toBeNull();
    expect(spokenService(null, {})).toBeNull();
  });
});
