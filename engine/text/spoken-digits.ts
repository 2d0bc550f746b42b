/** Digits as recognizers write them when a number is said digit by digit ("oh" and "o" are zero). */
export const DIGIT_WORDS: Readonly<Record<string, string>> = {
  zero: "0", oh: "0", o: "0", one: "1", two: "2", three: "3", four: "4", five: "5", six: "6", seven: "7", eight: "8", nine: "9",
};

/**
 * Runs of at least `minDigits` digits in a row, said one by one or written ("four one five",
 * "415 555 0199"; "double five" is 55, "triple" three of the next); "plus" before a run keeps
 * a country code.
 */
export function digitRuns(words: readonly string[], minDigits = 7): string[] {
  const runs: string[] = [];
  let run = "";
  let repeat = 1;
  const end = () => {
    if (run.replace("+", "").length >= minDigits) runs.push(run);
    run = "";
  };
  for (const word of words) {
    const digits = DIGIT_WORDS[word] ?? (/^\d+$/.test(word) ? word : undefined);
    if (digits !== undefined) {
      run += digits.repeat(repeat);
      repeat = 1;
    } else if (word === "double" || word === "triple") {
      repeat = word === "double" ? 2 : 3;
    } else if (word === "plus" && run === "") {
      run = "+";
    } else {
      end();
      repeat = 1;
    }
  }
  end();
  return runs;
}
