import { describe, expect, it } from "vitest";
import { normalizeNumberWords } from "../../../../engine/text/number-words.js";

const cases = (pairs: [string, string][]) => it.each(pairs)("%s -> %s", (input, output) => expect(normalizeNumberWords(input)).toBe(output));

describe("normalizeNumberWords", () => {
  describe("cardinals", () =>
    cases([
      ["three in the afternoon", "3 in the afternoon"],
      ["tomorrow at nine", "tomorrow at 9"],
      ["zero", "0"],
      ["eleven", "11"],
      ["nineteen", "19"],
      ["forty", "40"],
      ["forty two", "42"],
      ["forty-two", "42"],
      ["one hundred", "100"],
      ["one hundred and five", "105"],
      ["three hundred twenty one", "321"],
      ["two thousand", "2000"],
      ["two thousand twenty five", "2025"],
      ["two thousand three hundred", "2300"],
    ]));

  describe("clock times", () =>
    cases([
      ["ten thirty", "10:30"],
      ["at ten thirty please", "at 10:30 please"],
      ["nine fifteen", "9:15"],
      ["two forty five", "2:45"],
      ["twelve fifty nine", "12:59"],
      ["three oh five", "3:05"],
      ["seven o five", "7:05"],
      ["3 30", "3:30"],
      ["two thirty minute sessions", "2 30 minute sessions"],
    ]));

  describe("past and to", () =>
    cases([
      ["half past two", "2:30"],
      ["a quarter past eleven", "11:15"],
      ["quarter to four", "3:45"],
      ["quarter of four", "3:45"],
      ["quarter to one", "12:45"],
      ["ten past three", "3:10"],
      ["ten after nine", "9:10"],
      ["twenty to five", "4:40"],
      ["twenty five past six", "6:25"],
      ["seven minutes past two", "2:07"],
      ["five to twelve o'clock", "11:55"],
      ["one to four", "1 to 4"],
      ["half to four", "half to 4"],
    ]));

  describe("ordinals", () =>
    cases([
      ["the twenty third", "the 23rd"],
      ["twenty-third", "23rd"],
      ["march thirty first", "march 31st"],
      ["the third", "the 3rd"],
      ["the twelfth", "the 12th"],
      ["the twentieth", "the 20th"],
      ["the thirtieth of april", "the 30th of april"],
      ["the eleventh", "the 11th"],
      ["the first", "the 1st"],
      ["march second", "march 2nd"],
      ["first of may", "1st of may"],
      ["give me a second", "give me a second"],
      ["my first visit", "my first visit"],
    ]));

  describe("am, pm, o'clock and noon", () =>
    cases([
      ["nine a m", "9 am"],
      ["nine am", "9 am"],
      ["nine a.m.", "9 am"],
      ["four p m tomorrow", "4 pm tomorrow"],
      ["10:30 PM", "10:30 pm"],
      ["ten thirty p m", "10:30 pm"],
      ["i am here", "i am here"],
      ["three o clock", "3 o'clock"],
      ["three oclock", "3 o'clock"],
      ["three o'clock", "3 o'clock"],
      ["noon", "12 pm"],
      ["at twelve noon", "at 12 pm"],
      ["midday on friday", "12 pm on friday"],
      ["midnight", "12 am"],
    ]));

  describe("years", () =>
    cases([
      ["twenty twenty six", "2026"],
      ["march third twenty twenty six", "march 3rd 2026"],
      ["nineteen ninety nine", "1999"],
    ]));

  describe("everything else", () =>
    cases([
      ["my name is john smith", "my name is john smith"],
      ["  hello   there ", "hello there"],
      ["", ""],
      ["x-ray on the fifth", "x-ray on the 5th"],
      ["Three, thirty", "3, 30"],
      ["Tuesday at Three in the Afternoon.", "Tuesday at 3 in the Afternoon."],
      ["i'd like a cleaning tomorrow at three pm", "i'd like a cleaning tomorrow at 3 pm"],
    ]));
});
