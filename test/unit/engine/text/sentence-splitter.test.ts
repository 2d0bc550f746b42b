import { describe, expect, it } from "vitest";
import { SentenceSplitter, splitSentences, type SentenceSplitterOptions } from "../../../../engine/text/sentence-splitter.js";

/** Pushes `pieces` one by one, then flushes; returns every sentence in order. */
function split(pieces: string[], options: SentenceSplitterOptions = { firstClauseWords: 0 }): string[] {
  const splitter = new SentenceSplitter(options);
  return [...pieces.flatMap((piece) => splitter.push(piece)), ...splitter.flush()];
}

const whole = (text: string) => split([text]);
const byChar = (text: string) => split([...text]);

describe("SentenceSplitter boundaries", () => {
  it.each<[string, string[]]>([
    ["Hello there. How are you? I'm fine!", ["Hello there.", "How are you?", "I'm fine!"]],
    ["Really?! Yes.", ["Really?!", "Yes."]],
    ["Dr. Smith will see you. Thanks.", ["Dr. Smith will see you.", "Thanks."]],
    ["Mr. and Mrs. Jones arrived. Ms. Lee too.", ["Mr. and Mrs. Jones arrived.", "Ms. Lee too."]],
    ["Bring an ID, e.g. Passport or licence. Thanks.", ["Bring an ID, e.g. Passport or licence.", "Thanks."]],
    ["Use the portal, i.e. the website. Done.", ["Use the portal, i.e. the website.", "Done."]],
    ["It takes approx. 5 minutes. Okay?", ["It takes approx. 5 minutes.", "Okay?"]],
    ["It costs 3.5 dollars. Okay.", ["It costs 3.5 dollars.", "Okay."]],
    ["Pi is 3.14159 or so. Right.", ["Pi is 3.14159 or so.", "Right."]],
    ["See you at 10:30. Bye.", ["See you at 10:30.", "Bye."]],
    ["Come at 10 a.m. tomorrow. Great.", ["Come at 10 a.m. tomorrow.", "Great."]],
    ["Come at 10 a.m. See you then.", ["Come at 10 a.m.", "See you then."]],
    ["Apples, pears, etc. are fine. Thanks.", ["Apples, pears, etc. are fine.", "Thanks."]],
    ["Well... I think so. Yes.", ["Well...", "I think so.", "Yes."]],
    ["Hmm... maybe not. Sorry.", ["Hmm... maybe not.", "Sorry."]],
    ["Wait… What? No.", ["Wait…", "What?", "No."]],
    ["J. R. R. Tolkien wrote it. Yes.", ["J. R. R. Tolkien wrote it.", "Yes."]],
    ["1. Open the app. 2. Tap call.", ["1. Open the app.", "2. Tap call."]],
    ['He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]],
    ["(See the note.) Then go.", ["(See the note.)", "Then go."]],
    ["**Done.** Next step.", ["**Done.**", "Next step."]],
    ["I like it. and you?", ["I like it. and you?"]],
    ["Visit example.com. Then call us.", ["Visit example.com.", "Then call us."]],
    ["Version 2.0.1 is out. Update.", ["Version 2.0.1 is out.", "Update."]],
    ["Options:\n- one\n- two", ["Options:", "- one", "- two"]],
    ["First line\n\nSecond line.", ["First line", "Second line."]],
    ["No end here", ["No end here"]],
    ["  Spaced out.   Again.  ", ["Spaced out.", "Again."]],
  ])("%j", (text, sentences) => {
    expect(whole(text)).toEqual(sentences);
    expect(byChar(text)).toEqual(sentences);
  });

  it("gives the same sentences however the text is cut into pieces", () => {
    const text =
      'Dr. Smith is free at 10:30 a.m. tomorrow. The fee is $3.50, e.g. cash... Or card? "Yes." 1. Bring ID. J. Doe said so!\nThanks… Bye.';
    const expected = whole(text);
    expect(expected).toHaveLength(8);
    let seed = 7;
    for (let round = 0; round < 50; round++) {
      const pieces: string[] = [];
      for (let at = 0; at < text.length; ) {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        const size = 1 + (seed % 6);
        pieces.push(text.slice(at, at + size));
        at += size;
      }
      expect(split(pieces)).toEqual(expected);
    }
  });
});

describe("SentenceSplitter streaming", () => {
  it("emits a sentence once the next word shows it has ended", () => {
    const splitter = new SentenceSplitter();
    expect(splitter.push("Hello there")).toEqual([]);
    expect(splitter.push(".")).toEqual([]);
    expect(splitter.push(" ")).toEqual([]);
    expect(splitter.push("How")).toEqual(["Hello there."]);
    expect(splitter.push(" are you?")).toEqual([]);
    expect(splitter.push(" Fine")).toEqual(["How are you?"]);
    expect(splitter.flush()).toEqual(["Fine"]);
  });

  it("emits at a line break at once", () => {
    const splitter = new SentenceSplitter();
    expect(splitter.push("Your options")).toEqual([]);
    expect(splitter.push(":\n")).toEqual(["Your options:"]);
  });

  it("holds an abbreviation until the next word decides", () => {
    const splitter = new SentenceSplitter();
    expect(splitter.push("Ask Dr. ")).toEqual([]);
    expect(splitter.push("Smith. ")).toEqual([]);
    expect(splitter.push("She")).toEqual(["Ask Dr. Smith."]);
  });

  it("flush returns the rest, then nothing", () => {
    const splitter = new SentenceSplitter();
    expect(splitter.push("Goodbye.")).toEqual([]);
    expect(splitter.flush()).toEqual(["Goodbye."]);
    expect(splitter.flush()).toEqual([]);
    expect(splitter.push("   ")).toEqual([]);
    expect(splitter.flush()).toEqual([]);
  });

  it("splitSentences splits an async stream of pieces", async () => {
    async function* tokens() {
      yield* ["Sure", ".", " Dr", ". Lee", " is free", " at 3", ".30", " p.m", ". Bye"];
    }
    const sentences: string[] = [];
    for await (const sentence of splitSentences(tokens())) sentences.push(sentence);
    expect(sentences).toEqual(["Sure.", "Dr. Lee is free at 3.30 p.m.", "Bye"]);
  });
});

describe("SentenceSplitter first-clause rule", () => {
  const words = (text: string) => text.split(/(?= )/);
  const reply = "I checked the calendar for you and there is an opening next Tuesday, at ten in the morning, with Doctor Smith. Shall I book it?";

  it("cuts a long first sentence at its last clause boundary once it passes the word limit", () => {
    expect(split(words(reply), {})).toEqual([
      "I checked the calendar for you and there is an opening next Tuesday,",
      "at ten in the morning, with Doctor Smith.",
      "Shall I book it?",
    ]);
  });

  it("takes the last comma already seen when the limit is passed", () => {
    const splitter = new SentenceSplitter({ firstClauseWords: 5 });
    expect(splitter.push("Well, yes, I can do")).toEqual([]);
    expect(splitter.push(" that")).toEqual(["Well, yes,"]);
    expect(splitter.push(" for you, gladly")).toEqual([]);
    expect(splitter.flush()).toEqual(["I can do that for you, gladly"]);
  });

  it("leaves short first sentences and later sentences whole", () => {
    const text = "Yes, sure, I can do that. Then, after that, we will look at the calendar together, and find a time that suits you.";
    expect(split(words(text), {})).toEqual([
      "Yes, sure, I can do that.",
      "Then, after that, we will look at the calendar together, and find a time that suits you.",
    ]);
  });

  it("does not cut inside numbers", () => {
    const text = "The total for the three nights in the double room comes to 1,250 dollars including taxes. Okay?";
    expect(split(words(text), {})).toEqual(["The total for the three nights in the double room comes to 1,250 dollars including taxes.", "Okay?"]);
  });

  it("is off with firstClauseWords 0 and applies again after flush", () => {
    expect(split(words(reply), { firstClauseWords: 0 })[0]).toBe(
      "I checked the calendar for you and there is an opening next Tuesday, at ten in the morning, with Doctor Smith.",
    );
    const splitter = new SentenceSplitter();
    const first = [...words(reply).flatMap((w) => splitter.push(w)), ...splitter.flush()];
    const second = [...words(reply).flatMap((w) => splitter.push(w)), ...splitter.flush()];
    expect(second).toEqual(first);
    expect(first).toHaveLength(3);
  });
});
