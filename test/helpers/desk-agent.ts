import type { TestApp } from "./test-app.js";

/**
 * Creates the supervision tests' rules agent (Flite's kal voice) under `key`: it greets, and
 * answers "what are your opening hours" from its FAQ. Resolves with its id.
 */
export async function createDeskAgent(app: TestApp, key: string): Promise<string> {
  const agent = await app.request("POST", "/v1/agents", {
    key,
    body: {
      name: "Desk",
      system_prompt: "You answer calls for Acme Dental.",
      voice_id: "flite-kal",
      first_message: "Hello, Acme Dental here. How can I help?",
      metadata: { business_name: "Acme Dental", faq: [{ question: "What are your opening hours?", answer: "We are open from nine to five, Monday to Friday." }] },
    },
  });
  if (agent.status !== 201) throw new Error(`creating the desk agent: ${agent.status} ${JSON.stringify(agent.body)}`);
  return agent.body.id;
}
