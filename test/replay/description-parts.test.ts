/**
 * Taking click descriptions apart (no page): what names the target, what only says its
 * kind, look or place, and which words belong to its neighbour. Phrasings are ours.
 */
import { describe, expect, it } from "vitest";
import { parseDescription } from "../../src/replay/grounding/description-parts.ts";
import { stem } from "../../src/replay/grounding/description-text.ts";
import { meaningsOfText } from "../../src/replay/grounding/icon-names.ts";

describe("parseDescription", () => {
  it("keeps grid place, order and kind words out of the target's name", () => {
    const parts = parseDescription("tap the fourth thumbnail in the 2nd column, a red bicycle");
    expect(parts).toMatchObject({ picture: true, column: 1, itemOrdinal: 3 });
    expect(parts.contentWords).toContain("bicycle");
    for (const word of ["fourth", "2nd", "column", "thumbnail", "red"]) expect(parts.contentWords).not.toContain(word);
    expect(parts.colours).toEqual(new Set(["red"]));
    expect(parts.weakWords).toEqual(expect.arrayContaining(["2nd", "column", "fourth", "thumbnail"]));
  });

  it("reads a neighbour: its words are where the target stands, not what it says", () => {
    const quoted = parseDescription("hit the link to the left of 'Sign out'");
    expect(quoted.quoted).toEqual([]);
    expect(quoted.relation).toMatchObject({ kind: "leftOf", quoted: { normalized: "sign out" } });
    const plain = parseDescription("the pencil icon beneath the Shipping address heading");
    expect(plain.relation).toMatchObject({ kind: "below", words: ["shipping", "address"].map(stem) });
    expect(plain.contentWords).toEqual(["pencil"]);
    expect(plain.icon).toBe(true);
    // "next to" is a neighbour; "next" on its own names the control.
    expect(parseDescription("the small gear next to the clock").relation?.kind).toBe("near");
    expect(parseDescription("press the next arrow").contentWords).toContain("next");
  });

  it("tells a side of a container, a corner of the page and the colour of a surrounding box apart", () => {
    const inCard = parseDescription("hit the small gear at the top left of the settings panel");
    expect(inCard).toMatchObject({ size: "small", placeInContainer: { vertical: "top", horizontal: "left" } });
    expect(inCard.contextWords).toContain("setting");
    expect(parseDescription("the chat bubble in the lower right corner of the screen").place).toEqual({ vertical: "bottom", horizontal: "right" });
    expect(parseDescription("the help button on the left").place).toEqual({ horizontal: "left" });
    const boxed = parseDescription("the undo arrow within the pale yellow strip");
    expect(boxed.boxColour).toBe("yellow");
    expect(boxed.colours.size).toBe(0);
    expect(parseDescription("the circular purple button").round).toBe(true);
  });

  it("an order said in the container's words still orders the targets", () => {
    expect(parseDescription("the Archive link of the third message").itemOrdinal).toBe(2);
    expect(parseDescription("the middle tab").itemOrdinal).toBe(-2);
    expect(parseDescription("the banner in the middle of the page").itemOrdinal).toBeUndefined();
  });
});

describe("icon meanings", () => {
  it("gives the usual names of glyphs, class names and sprite ids", () => {
    expect(meaningsOfText("fa fa-trash-can")).toContain("delete");
    expect(meaningsOfText("icon-chevron-right")).toContain("next");
    expect(meaningsOfText("arrow_back")).toContain("previous");
    expect(meaningsOfText("×")).toContain("close");
    expect(meaningsOfText("❤️")).toContain("like");
    expect(meaningsOfText("three dots")).toContain("more");
    expect(meaningsOfText("Weekly report").size).toBe(0);
  });
});
