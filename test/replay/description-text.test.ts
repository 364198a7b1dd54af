/**
 * The one place literal rules live: what an assertion names and what it says of each
 * (appears, stays, gone, was); quoted strings decide, numbers in prose are reported; no
 * literal is dropped; whole-page "nothing changes" apart from one value staying.
 */
import { describe, expect, it } from "vitest";
import { assertionLiteralList, assertionLiterals, impliesChange, quotedStrings, typedTextOf } from "../../src/replay/grounding/description-text.ts";

const roles = (assertion: string) => assertionLiteralList(assertion).map((literal) => `${literal.decisive ? "Q" : "n"}:${literal.role}:${literal.text}`);

describe("literals an assertion names", () => {
  it("reads straight, double and curly quotes, but not an apostrophe inside a word", () => {
    expect(quotedStrings(`The badge shows '2' and the user's total reads "$59.98" under “Cart” and ‘Sale’`)).toEqual(["$59.98", "Cart", "Sale", "2"]);
    expect(quotedStrings("Crosses' turn, no literal here")).toEqual([]);
  });

  it("keeps every literal, each with its role", () => {
    expect(roles("The count changes from '2' to '3'")).toEqual(["Q:was:2", "Q:appears:3"]);
    expect(roles("The 'Settings' dialog closes and 'Saved' appears")).toEqual(["Q:gone:Settings", "Q:appears:Saved"]);
    expect(roles("The banner no longer shows 'Sale' and reads 'Welcome'")).toEqual(["Q:gone:Sale", "Q:appears:Welcome"]);
    expect(roles("'Moves: 7' is still shown and the score stays 72")).toEqual(["Q:stays:Moves: 7", "n:stays:72"]);
    expect(roles("A quote from 'Mira Castellanos' is shown")).toEqual(["Q:appears:Mira Castellanos"]);
  });

  it("takes numbers named in prose as reported literals, not counts", () => {
    expect(roles("The cart badge shows 2 and all 16 cards are face down")).toEqual(["n:appears:2"]);
    expect(assertionLiterals("Moves shows 3 and the title reads 'Done'")).toEqual({ decisive: ["Done"], reported: ["3"] });
    // What went away is not looked for on the new screen.
    expect(assertionLiterals("The 'Loading' spinner disappears").decisive).toEqual([]);
  });

  it("tells a whole page that stays from one value that stays", () => {
    expect(impliesChange("Nothing changes: the square stays empty")).toBe(false);
    expect(impliesChange("The list remains empty")).toBe(false);
    expect(impliesChange("The page stays the same")).toBe(false);
    expect(impliesChange("Only the Puffin Air flights remain")).toBe(true);
    expect(impliesChange("The two stars match and stay face up")).toBe(true);
    expect(roles("Nothing changes: Pairs found still shows '3 / 8'")).toEqual(["Q:stays:3 / 8"]);
  });

  it("reads a Type action's text off its description when the line carries none (the real dataset's lines)", () => {
    expect(typedTextOf("Type 'wireless mouse' into the search bar")).toEqual({ text: "wireless mouse", target: "Type into the search bar" });
    // The quoted string after "with" is the text even when the target is quoted first.
    expect(typedTextOf("Fill the 'Email' field with \"ada@example.org\"")).toEqual({ text: "ada@example.org", target: "Fill the 'Email' field with" });
    expect(typedTextOf("Enter “42” in the 'Quantity' box")?.text).toBe("42");
    expect(typedTextOf("the search box at the top")).toBeUndefined();
    // A line that carries its text: a quote of that text is not the target, other quotes are.
    expect(typedTextOf("Type 'PINE10' into the 'Promo code' input", "PINE10")).toEqual({ text: "PINE10", target: "Type into the 'Promo code' input" });
    expect(typedTextOf("the 'Promo code' input", "PINE10")).toBeUndefined();
  });
});
