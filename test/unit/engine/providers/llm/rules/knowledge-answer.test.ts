import { describe, expect, it } from "vitest";
import { answerFromPassages } from "../../../../../../engine/providers/llm/rules/knowledge-answer.js";
import { createRulesDialogueProvider } from "../../../../../../engine/providers/llm/rules/rules-dialogue-provider.js";
import { toUtterance } from "../../../../../../engine/providers/llm/rules/utterance.js";
import { KNOWLEDGE_SEARCH_TOOL, type KnowledgePassage, type ToolResult } from "../../../../../../engine/tools.js";
import { recordingTools, say, spoken, testAgent } from "../../../../../helpers/dialogue.js";

// Issue 31: a rules agent answers a question from its knowledge bases' passages, or says it does not know.

const HOURS: KnowledgePassage = {
  passage_id: "kbp_hours",
  document_name: "hours.md",
  text: "Opening hours\nWe are open Monday to Friday from 9 am to 5 pm. On Saturdays we open at 10 am and close at noon.",
  score: 3.2,
};
const PARKING: KnowledgePassage = { passage_id: "kbp_parking", document_name: "visit.html", text: "There is free parking behind the building. Bicycles go in the rack by the door.", score: 1.1 };

describe("answerFromPassages", () => {
  it("says the sentence of the first covering passage that shares most of the question's words", () => {
    expect(answerFromPassages(toUtterance("are you open on saturdays"), [HOURS, PARKING])).toEqual({ text: "On Saturdays we open at 10 am and close at noon.", passage: HOURS });
    expect(answerFromPassages(toUtterance("where can i park"), [HOURS, PARKING])?.passage).toBe(PARKING);
  });

  it("never answers with a heading, and finds nothing in passages that cover too little of the question", () => {
    expect(answerFromPassages(toUtterance("what are your opening hours"), [HOURS])?.text).toBe("We are open Monday to Friday from 9 am to 5 pm.");
    expect(answerFromPassages(toUtterance("do you deliver pizza on saturdays"), [HOURS])).toBeNull();
    expect(answerFromPassages(toUtterance("are you open on saturdays"), [])).toBeNull();
  });
});

describe("a rules agent with knowledge bases", () => {
  const open = (answer: (question: string) => KnowledgePassage[]) => {
    const tools = recordingTools((name, args): ToolResult => (name === KNOWLEDGE_SEARCH_TOOL ? { ok: true, data: { passages: answer(String(args.question)) } } : { ok: true, data: {} }));
    const offered = { definitions: [{ name: KNOWLEDGE_SEARCH_TOOL, description: "", parameters: {} }], execute: tools.execute };
    const session = createRulesDialogueProvider({ now: () => new Date("2025-03-03T10:00:00Z") }).open({ agent: testAgent({ metadata: { business_name: "Acme" } }), context: {}, tools: offered });
    return { session, tools };
  };

  it("answers a question no FAQ covers from the best passage, and notes which passage answered", async () => {
    const { session, tools } = open(() => [HOURS, PARKING]);
    const events = await say(session, "are you open on saturdays");
    expect(spoken(events)).toBe("On Saturdays we open at 10 am and close at noon. Is there anything else I can help you with?");
    expect(events).toContainEqual({ type: "answered_question", question: "are you open on saturdays", passage_id: "kbp_hours" });
    expect(tools.take()).toEqual([{ name: KNOWLEDGE_SEARCH_TOOL, arguments: { question: "are you open on saturdays" } }]);
  });

  it("says it does not know when nothing in the documents answers", async () => {
    const { session } = open(() => []);
    expect(spoken(await say(session, "do you sell pizza"))).toBe("I'm sorry, I don't have an answer to that. Is there anything else I can help you with?");
  });

  it("does not search for what is no question, nor without a knowledge base", async () => {
    const { session, tools } = open(() => [HOURS]);
    await say(session, "hello");
    expect(tools.take()).toEqual([]);
    const plain = recordingTools();
    const without = createRulesDialogueProvider({ now: () => new Date("2025-03-03T10:00:00Z") }).open({ agent: testAgent(), context: {}, tools: plain });
    expect(spoken(await say(without, "are you open on saturdays"))).toMatch(/don't have an answer/);
    expect(plain.take()).toEqual([]);
  });
});
