/**
 * The offline judge reads what an assertion says of the page's controls against the
 * candidate's DOM (rules 4, src/evaluator/judge/control-claims.ts): which radio, checkbox
 * or option is selected, and which field shows typed text. Phrasings of our own, in no
 * suite; the judgements run on real Chromium pages, the true page and a page that swallows
 * the input (only the pointer's hover or the focus ring shows).
 */
import type { Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { readScreenText, type ScreenText } from "../../src/browser/screen-text.ts";
import { controlClaims, typedTextInField, unmetControlClaims } from "../../src/evaluator/judge/control-claims.ts";
import { createHeuristicJudge } from "../../src/evaluator/judge/heuristic.ts";
import type { AssertionInput } from "../../src/evaluator/judge/types.ts";

const box = { x: 0, y: 0, width: 10, height: 10 };
const screenWith = (controls: Array<[string, boolean]>, items: ScreenText["items"] = []): ScreenText => ({
  items,
  controls: controls.map(([label, checked]) => ({ label, role: "radio", checked, box })),
  viewport: { width: 800, height: 600 },
});

describe("what an assertion says of the controls on the screen", () => {
  const plans = screenWith([
    ["Daily digest", false],
    ["Weekly digest", true],
    ["Weekly", false],
    ["EU", false],
    ["US", true],
  ]);

  it("reads a control as selected, and the one named after 'in place of' as not", () => {
    const byName = (claims: ReturnType<typeof controlClaims>) => [...claims].sort((a, b) => b.named.localeCompare(a.named));
    expect(byName(controlClaims("The Weekly digest option gets chosen in place of Daily digest", plans))).toEqual([
      { named: "Weekly digest", selected: true, newly: true },
      { named: "Daily digest", selected: false, newly: true },
    ]);
  });

  it("reads a denial in its own clause, borrowing the subject of selection from the clause before", () => {
    expect(controlClaims("'Daily digest' is now ticked, and 'Weekly digest' is not", plans)).toEqual([
      { named: "Daily digest", selected: true, newly: true },
      { named: "Weekly digest", selected: false, newly: false },
    ]);
  });

  it("names a control by quoted words that belong to one label only, and a name inside a longer one once", () => {
    expect(controlClaims("The 'Daily' choice is the checked one", plans)).toEqual([{ named: "Daily digest", selected: true, newly: false }]);
  });

  it("matches short labels only as written: the word 'us' is not the US option", () => {
    expect(controlClaims("Let us see: EU is picked", plans)).toEqual([{ named: "EU", selected: true, newly: false }]);
  });

  it("a state the words call new must not have been there before the action", () => {
    const before = screenWith([
      ["Daily digest", false],
      ["Weekly digest", true],
    ]);
    const unchanged = screenWith([
      ["Daily digest", false],
      ["Weekly digest", true],
    ]);
    const flipped = screenWith([
      ["Daily digest", true],
      ["Weekly digest", false],
    ]);
    // "again" and "no longer" say the states are new: a page where nothing flipped does not bear them out.
    const assertion = "Weekly digest is the chosen one again; Daily digest is no longer ticked";
    expect(unmetControlClaims(assertion, unchanged, before).map((claim) => [claim.named, claim.how])).toEqual([
      ["Weekly digest", "unchanged"],
      ["Daily digest", "unchanged"],
    ]);
    // Without a word that makes it new, a state that held all along is what the assertion says.
    expect(unmetControlClaims("Weekly digest is the chosen one", unchanged, before)).toEqual([]);
    expect(unmetControlClaims("Daily digest is now ticked", flipped, before)).toEqual([]);
  });

  it("says nothing where the assertion does not speak of selection or names no control on the screen", () => {
    expect(controlClaims("The Weekly digest panel opens with three issues", plans)).toEqual([]);
    expect(controlClaims("'Monthly' is selected", plans)).toEqual([]);
  });
});

describe("typed text the assertion puts in a field", () => {
  const field = (text: string) => ({ text, kind: "value" as const, box });
  const words = (text: string) => ({ text, kind: "text" as const, box });

  it("is found in a field's value, and not in the page's other text", () => {
    const assertion = "The quantity field now reads 42";
    expect(typedTextInField({ assertion, typed: "42", screen: screenWith([], [field("42"), words("42 in stock")]) })).toBe(true);
    expect(typedTextInField({ assertion, typed: "42", screen: screenWith([], [field(""), words("42 in stock")]) })).toBe(false);
  });

  it("does not apply when the assertion names no field, does not name the typed text, or the screen has no fields", () => {
    expect(typedTextInField({ assertion: "The list is filtered to 42 results", typed: "42", screen: screenWith([], [field("")]) })).toBeUndefined();
    expect(typedTextInField({ assertion: "The search box shows the query", typed: "owl", screen: screenWith([], [field("")]) })).toBeUndefined();
    expect(typedTextInField({ assertion: "The input holds owl", typed: "owl", screen: screenWith([], [words("owl")]) })).toBeUndefined();
  });
});

describe("the judge in Chromium: a swallowed input is told from the true page by the controls' state", () => {
  const judge = createHeuristicJudge();
  let browser: Awaited<ReturnType<typeof sharedBrowser>>;
  beforeAll(async () => {
    browser = await sharedBrowser();
  });
  afterAll(async () => {
    await closeSharedBrowser();
  });

  const PAGE = `<!doctype html><html><head><style>body{font:16px sans-serif;margin:24px}input[type=checkbox]{width:22px;height:22px}</style></head><body>
    <h3>Order extras</h3>
    <label><input type="checkbox" id="wrap"> Gift wrapping</label><br><br>
    <label><input type="checkbox" id="card"> Greeting card</label><br><br>
    <label>Copies <input id="copies" size="3"></label>
    <p>Prices: 1 copy 4.00, 3 copies 10.50</p></body></html>`;
  /** Input swallowed by the page: clicks do nothing and keys never reach the field. */
  const SWALLOW = `for (const type of ["click", "keydown", "keypress", "beforeinput", "input"])
      document.addEventListener(type, (event) => { event.preventDefault(); event.stopPropagation(); }, true);`;

  async function judged(options: { assertion: string; act: (page: Page) => Promise<void>; type: string; typed?: string; swallow: boolean }) {
    const capture = async (page: Page) => ({ png: await page.screenshot(), text: await readScreenText(page) });
    const run = async (swallow: boolean) => {
      const context = await browser.newContext({ viewport: { width: 700, height: 420 }, deviceScaleFactor: 1 });
      try {
        const page = await context.newPage();
        await page.setContent(PAGE);
        if (swallow) await page.evaluate(SWALLOW);
        const before = await capture(page);
        await options.act(page);
        await page.waitForTimeout(150);
        return { before, after: await capture(page) };
      } finally {
        await context.close();
      }
    };
    const truth = await run(false);
    const candidate = options.swallow ? await run(true) : await run(false);
    const input: AssertionInput = {
      actionIndex: 0,
      actionType: options.type,
      actionDescription: "the action",
      ...(options.typed ? { typedText: options.typed } : {}),
      assertion: options.assertion,
      before: candidate.before.png,
      after: candidate.after.png,
      beforeText: candidate.before.text,
      afterText: candidate.after.text,
      truth: { before: truth.before.png, after: truth.after.png },
    };
    return judge.judge(input);
  }

  it("a checkbox: Yes on the true page; No where the click was swallowed (only a hover shows)", async () => {
    const assertion = "Gift wrapping gets ticked; Greeting card stays as it was";
    const act = (page: Page) => page.click("#wrap");
    const truePage = await judged({ assertion, act, type: "Click", swallow: false });
    expect(truePage.result, truePage.think).toBe("Yes");
    const swallowed = await judged({ assertion, act, type: "Click", swallow: true });
    expect(swallowed.result, swallowed.think).toBe("No");
    expect(swallowed.evidence?.decidedBy).toBe("controls");
  });

  it("typed copies: Yes on the true page; No where the keys never reached the field, though '3' is on the page", async () => {
    const assertion = "The Copies box contains 3";
    const act = async (page: Page) => {
      await page.click("#copies");
      await page.keyboard.type("3");
    };
    const truePage = await judged({ assertion, act, type: "Type", typed: "3", swallow: false });
    expect(truePage.result, truePage.think).toBe("Yes");
    const swallowed = await judged({ assertion, act, type: "Type", typed: "3", swallow: true });
    expect(swallowed.result, swallowed.think).toBe("No");
    expect(swallowed.think).toContain("no field on the candidate's new screen shows it");
  });
});
