import { describe, expect, it } from "vitest";
import { fillTemplate } from "../../../../engine/text/template.js";

describe("fillTemplate", () => {
  it("fills placeholders from the context", () => {
    expect(fillTemplate("Hello {{customer_name}}, this is {{ agent }}.", { customer_name: "Ana", agent: "Sam" })).toBe("Hello Ana, this is Sam.");
    expect(fillTemplate("You owe {{amount}} dollars", { amount: 12 })).toBe("You owe 12 dollars");
  });

  it("drops placeholders without a value and tidies what they leave", () => {
    expect(fillTemplate("Hello {{customer_name}}, how can I help?", {})).toBe("Hello, how can I help?");
    expect(fillTemplate("Hi {{name}}!", { name: null })).toBe("Hi!");
    expect(fillTemplate("Hi {{name}}!", { name: { first: "x" } })).toBe("Hi!");
  });
});
