/**
 * The offline assertion judge on real screenshots (real Chromium) with real OCR:
 * a visible change plus the named literals → Yes; no change, or a literal not on
 * the screen → No.
 */

import type { Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { CANDIDATE_READING_SETTINGS, type ReadingStageTally, readingStageTallies } from "../../src/evaluator/judge/candidate-reading.ts";
import { createHeuristicJudge, impliesChange } from "../../src/evaluator/judge/heuristic.ts";
import { allReadings, literalSimilarity, occurrences, resemblances, ScreenReadings } from "../../src/evaluator/judge/ocr-reading.ts";
import { shutdownOcr } from "../../src/metrics/ocr.ts";
import { shoppingListPage } from "../support/evaluator-replay-fixtures.ts";

let page: Page;
let before: Buffer;
let after: Buffer;
/** The same list as `after`, with the pointer over the Add button (it repaints): nothing new was added. */
let hovered: Buffer;
const judge = createHeuristicJudge();

beforeAll(async () => {
  const browser = await sharedBrowser();
  page = await browser.newPage({ viewport: { width: 640, height: 480 } });
  await page.setContent(shoppingListPage());
  before = await page.screenshot();
  await page.fill("#item", "Blueberries");
  await page.click("#add");
  after = await page.screenshot();
  await page.addStyleTag({ content: "#add:hover { background: #0b3fb0 !important; outline: 3px solid #f90; }" });
  await page.hover("#add");
  hovered = await page.screenshot();
});
afterAll(async () => {
  await page?.close();
  await closeSharedBrowser();
  await shutdownOcr();
});

function input(assertion: string, shots: { before: Buffer; after: Buffer }) {
  return { actionIndex: 0, actionType: "Click", actionDescription: "the 'Add' button", assertion, ...shots };
}

describe("heuristic assertion judge", () => {
  it("says Yes when the screen changed and the quoted text and number are on it", async () => {
    const verdict = await judge.judge(input("A new item 'Blueberries' appears and the counter shows 1 items", { before, after }));
    expect(verdict.result).toBe("Yes");
    expect(verdict.evidence?.changedPixels).toBeGreaterThan(100);
    expect(verdict.evidence?.literals.map((l) => [l.literal, l.found])).toEqual([
      ["Blueberries", true],
      ["1", true],
    ]);
    expect(verdict.evidence?.ocrText?.toLowerCase()).toContain("blueberries");
  });

  it("says No when a named string is not on the new screen", async () => {
    const verdict = await judge.judge(input("A new item 'Strawberries' appears", { before, after }));
    expect(verdict.result).toBe("No");
    expect(verdict.think).toMatch(/'Strawberries' is not on the new screen/);
  });

  it("says No when the assertion implies a change and nothing changed", async () => {
    const verdict = await judge.judge(input("The list shows a new item", { before, after: before }));
    expect(verdict.result).toBe("No");
    expect(verdict.evidence).toMatchObject({ impliesChange: true, changedPixels: 0 });
  });

  it("accepts an unchanged screen when the assertion says nothing should change", async () => {
    const verdict = await judge.judge(input("The list remains empty", { before, after: before }));
    expect(verdict.result).toBe("Yes");
  });
});

describe("heuristic judge rules", () => {
  it("says No when what the assertion names was already on the screen: only the hovered button repainted", async () => {
    const verdict = await judge.judge(input("A new item 'Blueberries' appears in the list", { before: after, after: hovered }));
    expect(verdict.evidence?.changedPixels).toBeGreaterThan(40);
    expect(verdict.result).toBe("No");
    expect(verdict.think).toMatch(/nothing the assertion names is new on the screen: 'Blueberries' read before the action too/);
  });

  it("reads digits exactly: '2 items' is not '1 items'", async () => {
    const verdict = await judge.judge(input("The counter shows '2 items'", { before, after }));
    expect(verdict.result).toBe("No");
    expect(verdict.think).toMatch(/'2 items' is not on the new screen/);
  });

  it("checks what should have gone, and what was there before", async () => {
    const stillThere = await judge.judge(input("A new item 'Blueberries' appears and the heading 'Shopping list' disappears", { before, after }));
    expect(stillThere.result).toBe("No");
    expect(stillThere.think).toMatch(/'Shopping list' should have gone but is still on the screen/);
    const was = await judge.judge(input("The counter changes from '0 items' to '1 items'", { before, after }));
    expect(was.result).toBe("Yes");
    const wasNot = await judge.judge(input("The counter changes from '5 items' to '1 items'", { before, after }));
    expect(wasNot.result).toBe("No");
    expect(wasNot.think).toMatch(/'5 items' was not on the screen before the action/);
  });
});

describe("the reading's stage tallies", () => {
  type Tallies = ReturnType<typeof readingStageTallies>;
  /** What each stage did between two looks at the tallies (stages that did nothing left out), and the literals left unsettled meanwhile. */
  function tallySince(earlier: Tallies): { stages: ReadingStageTally[]; unsettledLiterals: number } {
    const now = readingStageTallies();
    const stages = now.stages
      .map((tally) => {
        const was = earlier.stages.find((entry) => entry.stage === tally.stage);
        return {
          stage: tally.stage,
          reached: tally.reached - (was?.reached ?? 0),
          readingsAsked: tally.readingsAsked - (was?.readingsAsked ?? 0),
          literalsSettled: tally.literalsSettled - (was?.literalsSettled ?? 0),
        };
      })
      .filter((tally) => tally.reached > 0 || tally.literalsSettled > 0);
    return { stages, unsettledLiterals: now.unsettledLiterals - earlier.unsettledLiterals };
  }
  const firstStage = "screen text and whole-screen OCR";

  it("a literal read new on the whole screen is settled at once", async () => {
    const earlier = readingStageTallies();
    await judge.judge(input("A new item 'Blueberries' appears", { before, after }));
    expect(tallySince(earlier)).toEqual({ stages: [{ stage: firstStage, reached: 1, readingsAsked: 2, literalsSettled: 1 }], unsettledLiterals: 0 });
  });

  const lastStage = `both whole screens ×${CANDIDATE_READING_SETTINGS.screenScale}`;

  it("a literal the screen does not show goes through every stage and stays unsettled; the old screen is not read enlarged for it", async () => {
    const earlier = readingStageTallies();
    await judge.judge(input("A new item 'Strawberries' appears", { before, after }));
    expect(tallySince(earlier)).toEqual({
      stages: [
        { stage: firstStage, reached: 1, readingsAsked: 2, literalsSettled: 0 },
        { stage: lastStage, reached: 1, readingsAsked: 1, literalsSettled: 0 },
      ],
      unsettledLiterals: 1,
    });
  });

  it("a literal the new screen shows but not as new has both screens read enlarged, to count it on each", async () => {
    const earlier = readingStageTallies();
    const verdict = await judge.judge(input("A new item 'Blueberries' appears in the list", { before: after, after: hovered }));
    expect(verdict.result).toBe("No");
    expect(tallySince(earlier).stages.find((tally) => tally.stage === lastStage)).toEqual({
      stage: lastStage,
      reached: 1,
      readingsAsked: 2,
      literalsSettled: 0,
    });
  });
});

describe("reading a changed region", () => {
  /** A screenshot of a page with small light-grey text on a band of `band` colour, over a `background` page. */
  async function bandShot(background: string, band: string, text: string): Promise<Buffer> {
    const textColour = band === "#f2f2f2" ? "#6b6b6b" : "#c9d1e0";
    await page.setContent(
      `<body style="margin:0;background:${background};font:15px sans-serif">` +
        `<div style="position:absolute;left:200px;top:200px;width:260px;padding:14px;background:${band};color:${textColour}">${text}</div></body>`,
    );
    return page.screenshot();
  }

  it("reads light text on a dark band of a light page, and dark text on a light card of a dark page", async () => {
    // Whether a crop is dark is a property of the crop: a light page's dark banner must be inverted, a dark page's light card not.
    const region = { left: 190, top: 190, width: 290, height: 66 };
    for (const [background, band] of [
      ["#ffffff", "#1d2740"],
      ["#15171d", "#f2f2f2"],
    ] as const) {
      const shot = await bandShot(background, band, "Parcel 7305 dispatched");
      const text = await new ScreenReadings(shot, shot).region("after", region, 2);
      expect(literalSimilarity("Parcel 7305 dispatched", text), `${band} band on ${background}: read '${text}'`).toBeGreaterThanOrEqual(0.8);
    }
  });

  it("reads a whole off-white screen enlarged: a dark banner, a dark button and a dark badge among dark-on-light text", async () => {
    // An off-white page (not #fff): most of each band is one light grey, which used to wrap round to black when stretched.
    await page.setContent(
      `<body style="margin:0;font:15px sans-serif;background:#f6f6f4;color:#333">` +
        `<div style="background:#22303c;color:#e6edf3;padding:6px 20px;font-size:13px">Branches close early on Fridays</div>` +
        `<h1 style="margin:40px 20px">Opening hours</h1><p style="margin:20px">Visit any weekday between nine and five.</p>` +
        `<button style="margin:20px;background:#6a1b9a;color:#fff;border:0;border-radius:6px;padding:8px 14px;font-size:13px">Book a visit</button>` +
        `<span style="background:#8a4b00;color:#ffe9cc;padding:3px 8px;font-size:12px;border-radius:10px">Fully booked</span></body>`,
    );
    const shot = await page.screenshot();
    const { width, height } = page.viewportSize()!;
    const text = await new ScreenReadings(shot, shot).region("after", { left: 0, top: 0, width, height }, 2, "block");
    for (const label of ["Branches close early on Fridays", "Opening hours", "Visit any weekday between nine and five", "Book a visit", "Fully booked"]) {
      expect(literalSimilarity(label, text), `'${label}' in '${text}'`).toBeGreaterThanOrEqual(0.8);
    }
  });
});

describe("heuristic judge helpers", () => {
  it("reads change words and tolerates OCR misreads of long literals only", () => {
    expect(impliesChange("The modal opens")).toBe(true);
    expect(impliesChange("The page stays the same")).toBe(false);
    expect(literalSimilarity("Add to cart", "buy now add to cart free")).toBe(1);
    expect(literalSimilarity("Blueberries", "blueherries 1 items")).toBeGreaterThan(0.8);
    expect(literalSimilarity("12", "total 13 items")).toBe(0);
    // Digits exact inside a longer literal, operator signs kept, OCR's readings of them allowed.
    expect(literalSimilarity("Total $94.49", "total $94.48")).toBe(0);
    expect(literalSimilarity("12 ×", "the display reads 12")).toBe(0);
    expect(literalSimilarity("12 ×", "12 x")).toBe(1);
    expect(literalSimilarity("56 ÷", "56 +")).toBe(1);
    expect(literalSimilarity("60 − 4 = 56", "1. 60 - 4 = 56")).toBe(1);
  });
  it("counts the places a text resembles a literal, garbled copies included, where occurrences counts exact ones", () => {
    const menu = "Chapters: Crossing the salt flats; Lunch by the lighthouse. Crossing the salt flats";
    expect(occurrences("Crossing the salt flats", menu)).toBe(2);
    expect(resemblances("Crossing the salt flats", menu)).toBe(2);
    const garbled = "Chapters: Crossng te sal fl; Lunch by the lighthouse. Crossing the salt flats";
    expect(occurrences("Crossing the salt flats", garbled)).toBe(1);
    expect(resemblances("Crossing the salt flats", garbled)).toBe(2);
    // Another line sharing its first words is not a copy; digits must still agree.
    expect(resemblances("Crossing the salt flats", "Crossing the river at dawn")).toBe(0);
    expect(resemblances("A picnic on the old pier", "A picnic in the walled garden")).toBe(0);
    expect(resemblances("Invoice 2291 paid", "invoice 2297 paid, invoice 2291 paid")).toBe(1);
    // Short literals and numbers count exact readings only.
    expect(resemblances("Tea", "tea teas tee tea")).toBe(2);
    expect(resemblances("$15.20", "total $15.20 of $15.20, then $15.29")).toBe(2);
    expect(resemblances("56 ÷ 8", "56 - 8")).toBe(0);
    expect(resemblances("Ward 7 east", "ward 7 eas")).toBe(1);
  });
});

describe("allReadings", () => {
  it("answers with every value in order, and with a failure only once every sibling reading has ended", async () => {
    expect(await allReadings([Promise.resolve("a"), Promise.resolve(2)])).toEqual(["a", 2]);
    let siblingEnded = false;
    const sibling = new Promise<string>((resolve) =>
      setTimeout(() => {
        siblingEnded = true;
        resolve("late");
      }, 50),
    );
    await expect(allReadings([Promise.reject(new Error("unreadable crop")), sibling])).rejects.toThrow("unreadable crop");
    expect(siblingEnded).toBe(true);
  });
});
