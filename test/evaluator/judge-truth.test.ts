/**
 * The offline judge with the true page's states as evidence (issue #30): pages of our own,
 * in real Chromium, each with an action and an assertion worded as an annotator words them
 * (phrasings in no suite). The true page is captured before and after the action; so is each
 * candidate (the true page itself, near misses, an empty page), screenshot and screen text
 * (src/browser/screen-text.ts), and the judge decides with the truth's change as evidence.
 */
import type { Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { readScreenText, type ScreenText } from "../../src/browser/screen-text.ts";
import { createHeuristicJudge } from "../../src/evaluator/judge/heuristic.ts";
import { literalFate, oldScreenNearMatters, truthReadingTallies } from "../../src/evaluator/judge/truth-change.ts";
import type { AssertionInput, AssertionVerdict, HeuristicEvidence } from "../../src/evaluator/judge/types.ts";

const VIEWPORT = { width: 800, height: 500 };
const judge = createHeuristicJudge();

interface Capture {
  png: Buffer;
  text: ScreenText;
}

let browser: Awaited<ReturnType<typeof sharedBrowser>>;
beforeAll(async () => {
  browser = await sharedBrowser();
});
afterAll(async () => {
  await closeSharedBrowser();
});

/** Opens `html`, captures the screen, runs `act`, lets it settle, captures again. */
async function around(html: string, act: (page: Page) => Promise<void>): Promise<{ before: Capture; after: Capture }> {
  const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1 });
  try {
    const page = await context.newPage();
    await page.setContent(html);
    const capture = async (): Promise<Capture> => ({ png: await page.screenshot(), text: await readScreenText(page) });
    const before = await capture();
    await act(page);
    await page.waitForTimeout(150);
    return { before, after: await capture() };
  } finally {
    await context.close();
  }
}

async function verdictOf(
  assertion: string,
  truth: { before: Capture; after: Capture },
  candidate: { before: Capture; after: Capture },
  options: { screenText?: boolean } = {},
): Promise<AssertionVerdict> {
  const input: AssertionInput = {
    actionIndex: 0,
    actionType: "Click",
    actionDescription: "the action",
    assertion,
    before: candidate.before.png,
    after: candidate.after.png,
    ...(options.screenText === false ? {} : { beforeText: candidate.before.text, afterText: candidate.after.text }),
    truth: { before: truth.before.png, after: truth.after.png },
  };
  return judge.judge(input);
}

/** The same judgement without the truth's states: the author's words alone (the rules before the truth was read). */
async function verdictFromWords(assertion: string, candidate: { before: Capture; after: Capture }, options: { screenText?: boolean } = {}) {
  return judge.judge({
    actionIndex: 0,
    actionType: "Click",
    actionDescription: "the action",
    assertion,
    before: candidate.before.png,
    after: candidate.after.png,
    ...(options.screenText === false ? {} : { beforeText: candidate.before.text, afterText: candidate.after.text }),
  });
}

/** No twice: from pixels and OCR alone (decided by `fromPixels`), and with the page's screen text (decided by its controls). */
async function expectNoBoth(
  assertion: string,
  truth: { before: Capture; after: Capture },
  candidate: { before: Capture; after: Capture },
  decided: { fromPixels: NonNullable<HeuristicEvidence["decidedBy"]> },
): Promise<AssertionVerdict> {
  const fromPixels = await verdictOf(assertion, truth, candidate, { screenText: false });
  expect(fromPixels.result, fromPixels.think).toBe("No");
  expect(fromPixels.evidence?.decidedBy).toBe(decided.fromPixels);
  const fromControls = await verdictOf(assertion, truth, candidate);
  expect(fromControls.result, fromControls.think).toBe("No");
  expect(fromControls.evidence?.decidedBy).toBe("controls");
  return fromControls;
}

const page = (body: string, style = "") =>
  `<!doctype html><html><head><style>body{font:18px sans-serif;margin:24px;background:#fff;color:#222}${style}</style></head><body>${body}</body></html>`;

describe("a change without new text: a selection moves between options", () => {
  const RADIOS = page(
    `<h2>Delivery</h2>
     <label><input type="radio" name="d" id="std" checked> Standard post</label><br><br>
     <label><input type="radio" name="d" id="exp"> Express courier</label>
     <p id="note" style="margin-top:200px">Orders ship on weekdays.</p>`,
    "input{width:20px;height:20px}",
  );
  const choose = (p: Page) => p.click("#exp");
  const assertion = "'Express courier' is picked now, and 'Standard post' is no longer picked";

  it("the true page itself passes; the evidence is the change at the named option", async () => {
    const truth = await around(RADIOS, choose);
    const verdict = await verdictOf(assertion, truth, await around(RADIOS, choose));
    expect(verdict.result, verdict.think).toBe("Yes");
    expect(verdict.evidence?.truth?.literals.map((entry) => [entry.literal, entry.fate])).toEqual([
      ["Express courier", "kept"],
      ["Standard post", "kept"],
    ]);
    expect(verdict.evidence?.decidedBy).toBe("location");
  });

  it("No for a page that changes somewhere else (the old rules had nothing to say: both labels are on screen)", async () => {
    const truth = await around(RADIOS, choose);
    const elsewhere = await around(RADIOS, async (p) => {
      await p.evaluate(() => {
        document.getElementById("note")!.textContent = "Free returns within thirty days.";
      });
    });
    // From pixels and OCR: the change is not where the truth's was. With the page's screen text, the options' own state says it first.
    await expectNoBoth(assertion, truth, elsewhere, { fromPixels: "location" });
  });

  it("No for a page that swallows the click: only the pointer's hover shows at the option, far less than the selection", async () => {
    // Large options, so that the hover's ring alone is a change (a small radio's hover is below the judge's threshold).
    const large = RADIOS.replace("input{width:20px;height:20px}", "input{width:40px;height:40px}");
    const truth = await around(large, choose);
    const swallowed = await around(large, async (p) => {
      await p.evaluate(() => document.getElementById("exp")!.addEventListener("click", (event) => event.preventDefault()));
      await choose(p);
    });
    expect(swallowed.after.png.equals(swallowed.before.png)).toBe(false);
    // From pixels alone, the hover is measured against the selection by size; with screen text, the option was never picked.
    const fromControls = await expectNoBoth(assertion, truth, swallowed, { fromPixels: "extent" });
    expect(fromControls.think).toContain("'Express courier' selected");
  });

  it("Yes for a page that marks the choice its own way, next to the option and of comparable size", async () => {
    const truth = await around(RADIOS, choose);
    // Its own control: the native radios are not drawn (so their state is not what a person sees).
    const ownWay = await around(RADIOS.replace("input{width:20px;height:20px}", "input{width:20px;height:20px;opacity:0}"), async (p) => {
      await p.evaluate(() => {
        const option = document.getElementById("exp")!;
        option.addEventListener("click", (event) => {
          event.preventDefault();
          option.parentElement!.insertAdjacentHTML("beforeend", '<b style="display:inline-block;width:26px;height:18px;background:#333"></b>');
        });
      });
      await choose(p);
    });
    const verdict = await verdictOf(assertion, truth, ownWay);
    expect(verdict.result, verdict.think).toBe("Yes");
  });

  it("No for a page where nothing happens", async () => {
    const truth = await around(RADIOS, choose);
    const verdict = await verdictOf(assertion, truth, await around(RADIOS, async () => {}));
    expect(verdict.result).toBe("No");
    expect(verdict.think).toMatch(/the true page changed here .*the candidate's screen did not/);
  });
});

describe("replacement phrasing, read off the truth", () => {
  const STATUS = page(`<p>Status: <span id="s">Syncing</span></p><button id="b">Refresh</button>`);
  const replace = async (p: Page) => {
    await p.evaluate(() => {
      document.getElementById("s")!.textContent = "Up to date";
    });
  };
  const assertion = "The word 'Syncing' is swapped for 'Up to date'";

  it("Yes when the old text went and the new one came", async () => {
    const truth = await around(STATUS, replace);
    const verdict = await verdictOf(assertion, truth, await around(STATUS, replace));
    expect(verdict.result, verdict.think).toBe("Yes");
    expect(verdict.evidence?.truth?.literals.map((entry) => entry.fate)).toEqual(["went", "appeared"]);
  });

  it("a second candidate of the same step, judged with the truth's reading kept from the first, gets the same evidence", async () => {
    const truth = await around(STATUS, replace);
    const candidate = await around(STATUS, replace);
    const first = await verdictOf(assertion, truth, candidate);
    const second = await verdictOf(assertion, truth, candidate);
    expect(second.result, second.think).toBe("Yes");
    expect(second.think).toBe(first.think);
    expect(second.evidence?.truth).toEqual(first.evidence?.truth);
  });

  it("No when the new text came but the old one stayed beside it", async () => {
    const truth = await around(STATUS, replace);
    const both = await around(STATUS, (p) => p.evaluate(() => document.getElementById("s")!.insertAdjacentText("afterend", " Up to date")));
    // The author's words alone let it pass: nothing in "is swapped for" says 'Syncing' must go.
    expect((await verdictFromWords(assertion, both)).result).toBe("Yes");
    const verdict = await verdictOf(assertion, truth, both);
    expect(verdict.result).toBe("No");
    expect(verdict.think).toMatch(/'Syncing' goes from the true page; the candidate's new screen still shows it/);
  });
});

describe("a colour change: an outline turns from red to green and a tick appears", () => {
  const FIELD = page(`<input id="e" value="ada@example.org" style="border:3px solid #d22;width:260px;padding:6px;font:18px sans-serif"><span id="t"></span>`);
  const fix = (p: Page) =>
    p.evaluate(() => {
      document.getElementById("e")!.style.borderColor = "#1a3";
      document.getElementById("t")!.innerHTML = '<svg width="28" height="28"><path d="M4 14 L11 21 L24 6" stroke="#1a3" stroke-width="5" fill="none"/></svg>';
    });
  const assertion = "The email box loses its red border and a green check mark is shown next to it";

  it("Yes for the same change", async () => {
    const truth = await around(FIELD, fix);
    const verdict = await verdictOf(assertion, truth, await around(FIELD, fix));
    expect(verdict.result, verdict.think).toBe("Yes");
    expect(verdict.evidence?.truth?.colours).toContain("green");
  });

  it("No for a page whose change brings another colour", async () => {
    const truth = await around(FIELD, fix);
    const grey = await around(FIELD, async (p) => {
      await p.evaluate(() => {
        document.getElementById("e")!.style.borderColor = "#888";
      });
    });
    // The author's words alone let it pass: the screen changed, and no text is named.
    expect((await verdictFromWords(assertion, grey)).result).toBe("Yes");
    const verdict = await verdictOf(assertion, truth, grey);
    expect(verdict.result).toBe("No");
    expect(verdict.evidence?.decidedBy).toBe("colour");
  });
});

describe("values typed into small fields are read from the page", () => {
  const QUANTITY = page(`<label>Quantity <input id="q" style="width:48px;font:14px sans-serif;color:#888"></label><p>Total items: 12</p>`);
  const type = (text: string) => (p: Page) => p.fill("#q", text);
  const assertion = "The quantity box now reads 47";

  it("Yes when the field shows the value (small, light text)", async () => {
    const truth = await around(QUANTITY, type("47"));
    const verdict = await verdictOf(assertion, truth, await around(QUANTITY, type("47")));
    expect(verdict.result, verdict.think).toBe("Yes");
    expect(verdict.evidence?.literals.find((entry) => entry.literal === "47")?.inScreenText).toBe(true);
  });

  it("No when the field shows another value", async () => {
    const truth = await around(QUANTITY, type("47"));
    const verdict = await verdictOf(assertion, truth, await around(QUANTITY, type("74")));
    expect(verdict.result, verdict.think).toBe("No");
  });

  it("an address that differs in one punctuation mark is not the same address", async () => {
    const MAIL = page(`<p>Send to: <input id="m" style="width:320px;font:16px sans-serif"></p>`);
    const said = "The address field shows 'grace.hopper@navy.example'";
    const truth = await around(MAIL, (p) => p.fill("#m", "grace.hopper@navy.example"));
    const right = await verdictOf(said, truth, await around(MAIL, (p) => p.fill("#m", "grace.hopper@navy.example")));
    const wrongPage = await around(MAIL, (p) => p.fill("#m", "grace_hopper@navy.example"));
    const wrong = await verdictOf(said, truth, wrongPage);
    expect(right.result, right.think).toBe("Yes");
    expect(wrong.result, wrong.think).toBe("No");
    // OCR alone takes the two for one address (letters may slip, and so may punctuation).
    expect((await verdictFromWords(said, wrongPage, { screenText: false })).result).toBe("Yes");
  });
});

describe("a big change: a picture opens over the page", () => {
  const GALLERY = page(
    `<div id="grid">${Array.from({ length: 8 }, (_, i) => `<span class="tile" style="background:hsl(${i * 45},60%,55%)"></span>`).join("")}</div>
     <div id="big" style="display:none;position:fixed;inset:40px 120px;background:#2b6;"></div>`,
    ".tile{display:inline-block;width:80px;height:60px;margin:4px}",
  );
  const open = async (p: Page) => {
    await p.evaluate(() => {
      document.getElementById("big")!.style.display = "block";
    });
  };
  const assertion = "The photo opens large in the middle, over the grid";

  it("Yes when the candidate opens something as large", async () => {
    const truth = await around(GALLERY, open);
    const verdict = await verdictOf(assertion, truth, await around(GALLERY, open));
    expect(verdict.result, verdict.think).toBe("Yes");
  });

  it("No when the candidate's change is a small mark", async () => {
    const truth = await around(GALLERY, open);
    const small = await around(GALLERY, (p) =>
      p.evaluate(() =>
        document.getElementById("grid")!.insertAdjacentHTML("beforeend", '<span style="display:inline-block;width:30px;height:20px;background:#2b6"></span>'),
      ),
    );
    const verdict = await verdictOf(assertion, truth, small);
    expect(verdict.result, verdict.think).toBe("No");
    expect(verdict.evidence?.decidedBy).toBe("extent");
  });
});

describe("keyboard focus moving to the next field", () => {
  const FORM = page(
    `<p><label>First name <input id="a" value="Ada"></label></p><p><label>Last name <input id="b" value="Lovelace"></label></p>` +
      `<p style="margin-top:120px">Step 2 of 3</p>`,
    "input{font:18px sans-serif;padding:4px} input:focus{outline:3px solid #36f}",
  );
  const tab = async (p: Page) => {
    await p.focus("#a");
    await p.keyboard.press("Tab");
  };
  const assertion = "The 'Last name' field is now focused with its text selected; 'Step 2 of 3' still shows";

  it("Yes when focus moved the same way; No when it moved nowhere", async () => {
    const truth = await around(FORM, tab);
    const same = await verdictOf(assertion, truth, await around(FORM, tab));
    expect(same.result, same.think).toBe("Yes");
    const stuck = await verdictOf(assertion, truth, await around(FORM, (p) => p.focus("#a")));
    expect(stuck.result, stuck.think).toBe("No");
  });
});

describe("without the candidate's screen text (OCR alone) the truth still decides", () => {
  it("a selection moving between options, judged from pixels and OCR only", async () => {
    const RADIOS = page(
      `<label><input type="radio" name="v" id="x" checked> Monthly plan</label><br><br><label><input type="radio" name="v" id="y"> Yearly plan</label>`,
      "input{width:20px;height:20px}",
    );
    const truth = await around(RADIOS, (p) => p.click("#y"));
    const verdict = await verdictOf("'Yearly plan' is chosen instead of 'Monthly plan'", truth, await around(RADIOS, (p) => p.click("#y")), {
      screenText: false,
    });
    expect(verdict.result, verdict.think).toBe("Yes");
  });
});

describe("a dark mark drawn thinner is the same colour (black and gray are one family)", () => {
  const LIST = page(`<p>Packing list</p><p id="row">Rain jacket <span id="m"></span></p><p style="margin-top:160px">Check each item before you leave.</p>`);
  /** A box after the item, out of the flow (nothing else moves). */
  const mark = (style: string) => (p: Page) =>
    p.evaluate((css) => {
      document.getElementById("m")!.innerHTML = `<span style="position:absolute;left:160px;top:58px;width:70px;height:34px;${css}"></span>`;
    }, style);
  const assertion = "A box appears after the rain jacket to show it is packed";

  it("Yes for a page whose mark is dark gray where the true page's is black (as thin black strokes read once scaled); No for a red one", async () => {
    const truth = await around(LIST, mark("background:#000"));
    const darkGray = await around(LIST, mark("background:#555"));
    const verdict = await verdictOf(assertion, truth, darkGray);
    // The premise: the truth's change brought black, the other page's brought gray and no black.
    expect(verdict.evidence?.truth?.colours).toContain("black");
    expect(verdict.evidence?.candidateColours).toContain("gray");
    expect(verdict.evidence?.candidateColours).not.toContain("black");
    expect(verdict.result, verdict.think).toBe("Yes");
    const red = await around(LIST, mark("background:#e00"));
    const redVerdict = await verdictOf(assertion, truth, red);
    expect(redVerdict.result, redVerdict.think).toBe("No");
    expect(redVerdict.evidence?.decidedBy).toBe("colour");
  });
});

describe("the reading of the true page's screens tallies its stages", () => {
  type Tallies = ReturnType<typeof truthReadingTallies>;
  /** How many times each stage looked and found between two looks at the tallies, by stage name. */
  const since = (earlier: Tallies) =>
    Object.fromEntries(
      truthReadingTallies().stages.map((tally, index) => [
        tally.stage,
        { reached: tally.reached - earlier.stages[index]!.reached, found: tally.found - earlier.stages[index]!.found },
      ]),
    );

  it("a quoted text that appears is found whole on the new screen and looked for at every stage on the old one", async () => {
    const MESSAGES = page(`<h2>Messages</h2><p id="status">Inbox is quiet</p><p id="new" style="font-size:28px"></p>`);
    const truth = await around(MESSAGES, (p) =>
      p.evaluate(() => {
        document.getElementById("new")!.textContent = "Parcel dispatched";
      }),
    );
    const earlier = truthReadingTallies();
    const verdict = await verdictOf("A note saying 'Parcel dispatched' shows up under the status line", truth, truth);
    expect(verdict.evidence?.truth?.literals.map((entry) => [entry.literal, entry.fate])).toEqual([["Parcel dispatched", "appeared"]]);
    const [whole, regions, enlarged, near] = truthReadingTallies().stages.map((tally) => tally.stage);
    // Old screen: not whole, not in the changed region, not enlarged. New screen: whole. Then near the change on both.
    expect(since(earlier)).toEqual({
      [whole!]: { reached: 2, found: 1 },
      [regions!]: { reached: 1, found: 0 },
      [enlarged!]: { reached: 1, found: 0 },
      [near!]: { reached: 2, found: 1 },
    });
    // Judged again (another candidate of the same step), the true page's reading is already known: nothing is tallied.
    const again = truthReadingTallies();
    await verdictOf("A note saying 'Parcel dispatched' shows up under the status line", truth, truth);
    expect(Object.values(since(again)).every((tally) => tally.reached === 0)).toBe(true);
  });

  it("a quoted text read on both screens and next to the change on the new one is not looked for next to it on the old one", async () => {
    const DELIVERY = page(
      `<h2>Delivery</h2><label style="font-size:24px"><input type="checkbox" id="express" style="width:24px;height:24px"> Express shipping</label>`,
    );
    const truth = await around(DELIVERY, (p) => p.click("#express"));
    const earlier = truthReadingTallies();
    const verdict = await verdictOf("The 'Express shipping' box gets ticked", truth, truth);
    expect(verdict.evidence?.truth?.literals.map((entry) => [entry.literal, entry.fate, entry.nearChange])).toEqual([["Express shipping", "kept", true]]);
    const [whole, regions, enlarged, near] = truthReadingTallies().stages.map((tally) => tally.stage);
    // Whole on both screens; next to the change on the new one, which settles it: the old screen's near reading could change nothing.
    expect(since(earlier)).toEqual({
      [whole!]: { reached: 2, found: 2 },
      [regions!]: { reached: 0, found: 0 },
      [enlarged!]: { reached: 0, found: 0 },
      [near!]: { reached: 1, found: 1 },
    });
  });
});

describe("which fates only the enlarged whole screen decided", () => {
  const reading = (count: number, byEnlarged = false) => ({ count, byEnlarged });
  // A literal only the enlarged screen found does not resemble anything on the whole screen's text.
  const alikeBefore = (before: { count: number; byEnlarged: boolean }) => (before.byEnlarged ? 0 : before.count);
  it("counts a literal the enlarged screen alone found, on the new screen only, as decided by it", () => {
    expect(literalFate({ before: reading(0), after: reading(1, true), nearBefore: false, nearAfter: true, alikeBefore: alikeBefore(reading(0)) })).toEqual({
      fate: "appeared",
      onlyByEnlarged: true,
    });
  });
  it("does not count a literal read whole on both screens", () => {
    expect(literalFate({ before: reading(1), after: reading(1), nearBefore: true, nearAfter: true, alikeBefore: alikeBefore(reading(1)) })).toEqual({
      fate: "kept",
      onlyByEnlarged: false,
    });
  });
  it("does not count one the enlarged screen found before where the near readings find it on both screens anyway", () => {
    expect(literalFate({ before: reading(1, true), after: reading(1), nearBefore: true, nearAfter: true, alikeBefore: alikeBefore(reading(1, true)) })).toEqual(
      { fate: "kept", onlyByEnlarged: false },
    );
  });
  it("counts one whose old-screen reading by the enlarged screen turns 'appeared' into 'kept'", () => {
    expect(
      literalFate({ before: reading(1, true), after: reading(1), nearBefore: false, nearAfter: true, alikeBefore: alikeBefore(reading(1, true)) }),
    ).toEqual({ fate: "kept", onlyByEnlarged: true });
  });
});

describe("the old screen's near reading is skipped only where it cannot change what is known of a literal", () => {
  const counts = [0, 1, 2, 3];
  const readings = counts.flatMap((count) => [false, true].map((byEnlarged) => ({ count, byEnlarged })));
  it("gives the same fate, nearness and enlarged-only verdict with either answer wherever it is skipped", () => {
    let skipped = 0;
    for (const before of readings)
      for (const after of readings)
        for (const nearAfter of [false, true])
          for (const alikeBefore of counts) {
            if (oldScreenNearMatters(before, nearAfter)) continue;
            skipped += 1;
            const known = (nearBefore: boolean) => ({
              ...literalFate({ before, after, nearBefore, nearAfter, alikeBefore }),
              nearChange: nearBefore || nearAfter,
            });
            expect(known(true), JSON.stringify({ before, after, nearAfter, alikeBefore })).toEqual(known(false));
          }
    expect(skipped).toBeGreaterThan(0);
  });
  it("is skipped for a literal on both screens that the new screen reads near the change", () => {
    expect(oldScreenNearMatters({ count: 1, byEnlarged: false }, true)).toBe(false);
  });
  it("is read when the old screen did not read the literal, only its enlarged pass did, or the new screen does not read it near the change", () => {
    expect(oldScreenNearMatters({ count: 0, byEnlarged: false }, true)).toBe(true);
    expect(oldScreenNearMatters({ count: 1, byEnlarged: true }, true)).toBe(true);
    expect(oldScreenNearMatters({ count: 1, byEnlarged: false }, false)).toBe(true);
  });
});

describe("a literal is new only when the new screen reads it more often than the old one shows anything like it", () => {
  const reading = (count: number) => ({ count, byEnlarged: false });
  it("keeps a literal read once exactly and once garbled before, and twice after (OCR garbled a copy that was there)", () => {
    expect(literalFate({ before: reading(1), after: reading(2), nearBefore: true, nearAfter: true, alikeBefore: 2 }).fate).toBe("kept");
  });
  it("still calls a literal new when the new screen reads it more often than anything like it stood before", () => {
    expect(literalFate({ before: reading(1), after: reading(2), nearBefore: true, nearAfter: true, alikeBefore: 1 }).fate).toBe("appeared");
    expect(literalFate({ before: reading(0), after: reading(2), nearBefore: false, nearAfter: true, alikeBefore: 1 }).fate).toBe("appeared");
  });
  it("does not let a garbled look-alike on the old screen stop a literal from going", () => {
    expect(literalFate({ before: reading(1), after: reading(0), nearBefore: true, nearAfter: false, alikeBefore: 1 }).fate).toBe("went");
  });
});
