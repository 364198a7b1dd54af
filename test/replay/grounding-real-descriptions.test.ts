/**
 * Descriptions as people write them for pages nobody wrote for us (issue #30, item 3),
 * on small pages of our own in real Chromium: controls wired only by script, icon-only
 * controls, pictures picked by place and size, controls placed by the words next to
 * them, by a side of their card, by a corner of the page, and by colour. Each phrasing
 * here is ours and in no task suite. Where a description cannot single out one element
 * (equal sizes, a grid place that is empty, a quoted name that is not on the page) the
 * grounder answers -1, as a careful person would refuse to guess.
 */

import fs from "node:fs";
import type { Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { harnessVisibleElements, type InteractiveElement, indexInteractiveElements } from "../../src/browser/element-index.ts";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { collectTextBlocks } from "../../src/browser/text-blocks.ts";
import { PROFILE_RULES } from "../../src/protocol.ts";
import { createHeuristicGrounder } from "../../src/replay/grounding/heuristic.ts";
import type { GroundingAnswer } from "../../src/replay/grounding/types.ts";
import { type ReplayAction, type ReplayStyle, replayTrajectory } from "../../src/replay/replay.ts";
import { makeTempDir } from "../support/browser-fixtures.ts";

const NO_WAITS = { initialSettleMs: 0, actionSettleMs: 0, screenshotDelayMs: 0, scrollExtraSettleMs: 0 };
const CORRECTED: ReplayStyle = { ...PROFILE_RULES.corrected, timings: NO_WAITS };
const OFFICIAL: ReplayStyle = { ...PROFILE_RULES.official, timings: NO_WAITS };

/**
 * A link whose words are place and kind words, and a 3 × 3 grid of thumbnails with no alt text, wired with `img.onclick` by script;
 * a click shows it full screen, a click on that closes it.
 */
const GALLERY = `<!doctype html><html><head><style>
  body { margin: 0; background: #111; }
  .row { display: flex; gap: 8px; margin: 8px; }
  .row img { width: 120px; height: 90px; object-fit: cover; }
  #viewer { display: none; position: fixed; inset: 0; width: 100%; height: 100%; object-fit: contain; background: #000; z-index: 10; }
  #viewer.open { display: block; }
  a { color: #ddd; margin: 8px; }
</style></head><body>
  <a href="#week">Top photos of the week</a>
  <div class="row"><img><img><img></div><div class="row"><img><img><img></div><div class="row"><img><img><img></div>
  <img id="viewer">
  <script>{
    const viewer = document.getElementById("viewer");
    document.querySelectorAll(".row img").forEach((img, n) => {
      const canvas = document.createElement("canvas");
      canvas.width = 12; canvas.height = 9;
      const paint = canvas.getContext("2d");
      paint.fillStyle = "hsl(" + n * 40 + ", 70%, 50%)";
      paint.fillRect(0, 0, 12, 9);
      img.src = canvas.toDataURL();
      img.dataset.n = String(n);
      img.onclick = () => { viewer.src = img.src; viewer.dataset.n = String(n); viewer.className = "open"; };
    });
    viewer.onclick = () => { viewer.className = ""; };
  }</script>
</body></html>`;

/** Controls a person sees as clickable though no tag or role says so, and one that is not (a toolbar hearing its buttons' clicks). */
const SCRIPT_WIRED = `<!doctype html><html><body style="font: 16px sans-serif">
  <div id="tile" style="width: 160px; padding: 8px; border: 1px solid #888">Weekly report</div>
  <div id="pressable" style="width: 160px; padding: 8px; margin-top: 8px; border: 1px solid #888">Hold to record</div>
  <span id="property">Show more</span>
  <div id="focusable" tabindex="0">Keyboard card</div>
  <div id="toolbar" style="margin-top: 8px"><button>Bold</button> <button>Italic</button></div>
  <p id="log"></p>
  <script>{
    const log = (what) => { document.getElementById("log").textContent += what + ";"; };
    document.getElementById("tile").addEventListener("click", () => log("tile"));
    document.getElementById("pressable").addEventListener("mousedown", () => log("pressed"));
    document.getElementById("property").onclick = () => log("more");
    document.getElementById("toolbar").addEventListener("click", (event) => log(event.target.textContent));
  }</script>
</body></html>`;

/** Icon-only controls named only by their classes, sprite ids, glyphs and file names; one text button that must not win "add". */
const ICONS = `<!doctype html><html><head><style>
  body { font: 16px sans-serif; margin: 16px; }
  button, a, span.icon { display: inline-block; width: 28px; height: 28px; margin: 4px; vertical-align: middle; }
  .gear { width: 24px; height: 24px; cursor: pointer; background: url("img/gear-outline.svg") no-repeat; }
</style></head><body>
  <svg style="display:none"><symbol id="icon-hamburger" viewBox="0 0 10 10"><path d="M0 1h10M0 5h10M0 9h10" stroke="#000"/></symbol></svg>
  <header><button id="menu"><svg width="20" height="20"><use href="#icon-hamburger"></use></svg></button> <div class="gear" id="gear"></div></header>
  <div class="notice">Draft saved <button id="dismiss" class="btn-dismiss"><i class="fa fa-times"></i></button></div>
  <ul>
    <li>Milk <span class="icon trash-can" id="trash-milk" onclick="void 0"></span></li>
    <li>Eggs <span class="icon trash-can" id="trash-eggs" onclick="void 0"></span></li>
  </ul>
  <div class="carousel"><a id="prev" class="carousel-prev" href="#p"><svg class="chevron-left" width="20" height="20"><path d="M14 2 L4 10 L14 18"/></svg></a>
  <a id="next" class="carousel-next" href="#n"><svg class="chevron-right" width="20" height="20"><path d="M6 2 L16 10 L6 18"/></svg></a></div>
  <button id="new-list" style="width: auto">New list</button>
  <button id="plus" class="add-item"><svg width="16" height="16"><path d="M8 0v16M0 8h16" stroke="#000"/></svg></button>
</body></html>`;

/** Alike controls told apart only by where they are and how they look. */
const PLACES =
  `<!doctype html><html><head><style>
  body { font: 15px sans-serif; margin: 12px; }
  .card { display: flex; justify-content: space-between; align-items: center; width: 360px; margin: 6px 0; padding: 8px; border: 1px solid #ccc; }
  .card button { width: 30px; height: 30px; border: 1px solid #555; background: #fff; }
  .card button.round { border-radius: 50%; }
  .grid { display: grid; grid-template-columns: repeat(3, 90px); gap: 6px; margin: 12px 0; }
  .box { padding: 8px; margin: 6px 0; width: 200px; }
  .box button { width: 30px; height: 30px; }
  .swatches button { width: 40px; height: 24px; border: 0; margin: 2px; }
  .fab { position: fixed; right: 16px; bottom: 16px; width: 48px; height: 48px; }
</style></head><body>
  <div class="card" id="alpha"><button class="square"></button><span>Alpha plan, 5 GB of storage</span><button class="round"></button></div>
  <div class="card" id="beta"><button class="square"></button><span>Beta plan, 50 GB of storage</span><button class="round"></button></div>
  <div class="card" id="gamma"><button class="square"></button><span>Gamma plan, 500 GB of storage</span><button class="round"></button></div>
  <div class="grid"><span>Milk</span><span>Eggs</span><span>Bread</span>
    <button data-of="milk">Delete</button><button data-of="eggs">Delete</button><button data-of="bread">Delete</button></div>
  <div><span>Quantity</span> <button class="stepper" data-for="quantity">+</button></div>
  <div><span>Size</span> <button class="stepper" data-for="size">+</button></div>
  <div class="box" style="background: #fff"><button class="reset" aria-label="Reset" data-box="white"></button></div>
  <div class="box" style="background: #e4e4e4"><button class="reset" aria-label="Reset" data-box="grey"></button></div>
  <div class="swatches"><button style="background: #2b6cb0" data-colour="blue"></button><button style="background: #c53030" data-colour="red"></button>` +
  `<button style="background: #2f855a" data-colour="green"></button><button style="background: #8e44ad" data-colour="purple"></button></div>
  <button class="fab" aria-label="" data-fab="yes"></button>
</body></html>`;

/** Three alike cards, each with a plain button at either end. */
const CARDS = `<!doctype html><html><head><style>
  body { font: 15px sans-serif; margin: 12px; }
  .card { display: flex; justify-content: space-between; align-items: center; width: 360px; margin: 6px 0; padding: 8px; border: 1px solid #ccc; }
  .card button { width: 30px; height: 30px; }
</style></head><body>
  <div class="card" id="north"><button data-end="left"></button><span>North office, opens at nine</span><button data-end="right"></button></div>
  <div class="card" id="south"><button data-end="left"></button><span>South office, opens at ten</span><button data-end="right"></button></div>
  <div class="card" id="east"><button data-end="left"></button><span>East office, opens at noon</span><button data-end="right"></button></div>
</body></html>`;

/** A product page: one large photo, three small ones and a tiny one, all clickable, none with alt text. */
const PRODUCT = `<!doctype html><html><head><style>
  body { margin: 12px; } img { display: block; margin: 4px; cursor: pointer; background: #999; }
  .hero { width: 320px; height: 220px; } .small { width: 80px; height: 60px; display: inline-block; } .tiny { width: 36px; height: 28px; }
</style></head><body>
  <img class="hero" data-size="hero"><div><img class="small" data-size="small"><img class="small" data-size="small"><img class="small" data-size="small"></div>
  <img class="tiny" data-size="tiny">
</body></html>`;

let page: Page;
const grounder = createHeuristicGrounder();
const tempDirs: string[] = [];

beforeAll(async () => {
  const browser = await sharedBrowser();
  page = await browser.newPage({ viewport: { width: 800, height: 600 } });
});

afterAll(async () => {
  await page?.close();
  await closeSharedBrowser();
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

function evalpointsDir(): string {
  const dir = makeTempDir("grounding-real-descriptions");
  tempDirs.push(dir);
  return dir;
}

async function load(html: string): Promise<InteractiveElement[]> {
  await page.setContent(html);
  return indexInteractiveElements(page);
}

/** Grounds on the page as it is now (indexing it again), in the given profile's list. */
async function ground(
  description: string,
  profile: "corrected" | "official" = "corrected",
): Promise<{ answer: GroundingAnswer; attribute: (name: string) => Promise<string | null> }> {
  const indexed = await indexInteractiveElements(page);
  const elements = profile === "official" ? harnessVisibleElements(indexed) : indexed;
  const answer = await grounder.locate(
    { actionType: "Click", description },
    {
      elements,
      accessibilityTree: () => Promise.reject(new Error("the heuristic must not need the accessibility tree")),
      highlightedScreenshot: () => Promise.reject(new Error("the heuristic must not need a screenshot")),
      textBlocks: () => collectTextBlocks(page),
    },
  );
  const attribute = (name: string) => page.locator(`[data-iwr-idx="${answer.index}"]`).getAttribute(name);
  return { answer, attribute };
}

async function attributeOf(description: string, name: string, profile: "corrected" | "official" = "corrected"): Promise<string | null> {
  const { answer, attribute } = await ground(description, profile);
  expect(answer.index, `${description}: ${answer.reason ?? ""}`).toBeGreaterThanOrEqual(0);
  return attribute(name);
}

describe("controls wired by script are listed, as a person would see them", () => {
  it("an <img> with an onclick property is a clickable picture in both profiles' lists", async () => {
    const elements = await load(GALLERY);
    const thumbs = elements.filter((el) => el.tag === "img");
    expect(thumbs).toHaveLength(9);
    expect(thumbs.every((el) => el.role === "img" && el.media === "img" && el.clickableBecause === "handler")).toBe(true);
    expect(harnessVisibleElements(elements).filter((el) => el.tag === "img")).toHaveLength(9);
  });

  it(
    "addEventListener listeners are found through DevTools; a container hearing its buttons' clicks is not a control; " +
      "the harness's list leaves listeners out",
    async () => {
      const elements = await load(SCRIPT_WIRED);
      const because = (id: string) => elements.find((el) => el.id === id)?.clickableBecause;
      expect([because("tile"), because("pressable"), because("property"), because("focusable")]).toEqual(["listener", "listener", "handler", "tabindex"]);
      expect(because("toolbar")).toBeUndefined();
      expect(elements.filter((el) => el.tag === "button").map((el) => el.text)).toEqual(["Bold", "Italic"]);
      const official = harnessVisibleElements(elements).map((el) => el.id);
      expect(official).toContain("property");
      expect(official).not.toContain("tile");
      expect(official).not.toContain("pressable");
    },
  );

  it("a listener-only tile is clicked through the replay in corrected; official, like the harness, does not see it", async () => {
    await load(SCRIPT_WIRED);
    const actions: ReplayAction[] = [{ type: "Click", description: "open the weekly report tile" }];
    const run = (style: ReplayStyle) =>
      replayTrajectory({
        surface: { page, screenshot: async () => Buffer.alloc(0), withTimeout: (_label, _ms, task) => task() },
        actions,
        grounder,
        style,
        evalpointsDir: evalpointsDir(),
      });
    const corrected = await run(CORRECTED);
    expect(corrected.steps[0]?.ok, corrected.steps[0]?.reason).toBe(true);
    expect(await page.locator("#log").innerText()).toBe("tile;");
    const official = await run(OFFICIAL);
    expect(official.steps[0]?.ok).toBe(false);
    expect(official.steps[0]?.reason).toMatch(/grounding found no element/);
  });
});

describe("pictures by grid place, order, corner and size", () => {
  it("finds thumbnails by row and order, said several ways", async () => {
    await load(GALLERY);
    expect(await attributeOf("Pick the middle picture of the bottom row", "data-n")).toBe("7");
    expect(await attributeOf("tap the last image in the first row", "data-n")).toBe("2");
    expect(await attributeOf("the second thumbnail in the middle row", "data-n")).toBe("4");
    expect(await attributeOf("open the picture in the top right corner", "data-n")).toBe("2");
    expect(await attributeOf("the 3rd photo", "data-n")).toBe("2");
    // The link says "top" and "photos", but those words only say where and what kind: they name no element.
    expect(await attributeOf("the third photo in the top row", "data-n")).toBe("2");
  });

  it("picks the clearly largest or smallest picture", async () => {
    await load(PRODUCT);
    expect(await attributeOf("the big product photo", "data-size")).toBe("hero");
    expect(await attributeOf("the tiny picture at the bottom", "data-size")).toBe("tiny");
    expect(await attributeOf("the smallest image", "data-size")).toBe("tiny");
  });

  it("refuses a place that is empty and a size that singles out nothing", async () => {
    await load(GALLERY);
    const outside = await ground("the fourth photo in the top row");
    expect(outside.answer.index).toBe(-1);
    expect(outside.answer.reason).toMatch(/no element at that place/);
    const big = await ground("click the big photo");
    expect(big.answer.index).toBe(-1);
    expect(big.answer.reason).toMatch(/does not single one out/);
    // A quoted name that is on no element is a missing control: kind and place do not stand in for it.
    expect((await ground("the 'Holiday' photo in the top row")).answer.index).toBe(-1);
  });

  it("opens a thumbnail and closes the enlarged picture through the replay, in both profiles, and says why", async () => {
    for (const style of [CORRECTED, OFFICIAL]) {
      await load(GALLERY);
      const result = await replayTrajectory({
        surface: { page, screenshot: async () => Buffer.alloc(0), withTimeout: (_label, _ms, task) => task() },
        actions: [
          { type: "Click", description: "Pick the middle picture of the bottom row" },
          { type: "Click", description: "close the enlarged picture" },
          { type: "Click", description: "the first image of the second row" },
        ],
        grounder,
        style,
        evalpointsDir: evalpointsDir(),
      });
      expect(result.steps.map((step) => step.reason ?? "ok")).toEqual(["ok", "ok", "ok"]);
      expect(result.steps[0]?.grounding?.why).toMatch(/by kind \(photo\/image: 9 visible\), row last of 3, middle from the left/);
      expect(result.steps[1]?.grounding?.why).toMatch(/photo\/image/);
      expect(await page.locator("#viewer").getAttribute("data-n")).toBe("3");
      expect(await page.locator("#viewer").getAttribute("class")).toBe("open");
    }
  });
});

describe("icon-only controls, named by what they show", () => {
  it("reads icon classes, sprite ids, glyph names and image file names, and the usual names of icons", async () => {
    await load(ICONS);
    expect(await attributeOf("dismiss the draft notice", "id")).toBe("dismiss");
    expect(await attributeOf("the X on the 'Draft saved' message", "id")).toBe("dismiss");
    expect(await attributeOf("the hamburger menu", "id")).toBe("menu");
    expect(await attributeOf("the next arrow of the carousel", "id")).toBe("next");
    expect(await attributeOf("go back to the previous slide", "id")).toBe("prev");
    expect(await attributeOf("the cog in the header", "id")).toBe("gear");
    expect(await attributeOf("the bin icon next to Eggs", "id")).toBe("trash-eggs");
    expect(await attributeOf("remove Milk from the list with its delete icon", "id")).toBe("trash-milk");
  });

  it("gives icon names no weight on controls that show words, and refuses an icon that is not there", async () => {
    await load(ICONS);
    // "New list" would be an "add" to a thesaurus; a person asking for the add icon means the plus.
    expect(await attributeOf("the add icon", "id")).toBe("plus");
    const share = await ground("the share icon");
    expect(share.answer.index).toBe(-1);
  });
});

describe("alike controls told apart by place and look", () => {
  it("a side of its card, with or without an order", async () => {
    await load(PLACES);
    const cardOf = async (description: string) => {
      const { answer } = await ground(description);
      expect(answer.index, answer.reason).toBeGreaterThanOrEqual(0);
      return page.locator(`[data-iwr-idx="${answer.index}"]`).evaluate((el) => `${el.closest(".card")?.id} ${el.className}`);
    };
    expect(await cardOf("the round button at the right of the second card")).toBe("beta round");
    expect(await cardOf("the round button on the right of a card")).toBe("alpha round");
    expect(await cardOf("the square button at the left of the last card")).toBe("gamma square");
  });

  it("a side of its card decides between alike buttons of the same card", async () => {
    await load(CARDS);
    const which = async (description: string) => {
      const { answer } = await ground(description);
      expect(answer.index, answer.reason).toBeGreaterThanOrEqual(0);
      return page.locator(`[data-iwr-idx="${answer.index}"]`).evaluate((el) => `${el.closest(".card")?.id} ${el.getAttribute("data-end")}`);
    };
    expect(await which("the button at the right of the second card")).toBe("south right");
    expect(await which("the button on the left side of the last card")).toBe("east left");
  });

  it("the words a control stands under, beside or in, when its own words are the same as its neighbours'", async () => {
    await load(PLACES);
    expect(await attributeOf("the Delete button under Eggs", "data-of")).toBe("eggs");
    expect(await attributeOf("the 'Delete' button below 'Bread'", "data-of")).toBe("bread");
    expect(await attributeOf("the Delete button of the first item", "data-of")).toBe("milk");
    // The quoted word is where it stands, not what it says.
    expect(await attributeOf("the button to the right of 'Size'", "data-for")).toBe("size");
    expect(await attributeOf("the '+' button above Size", "data-for")).toBe("quantity");
    expect(await attributeOf("the reset icon inside the grey box", "data-box")).toBe("grey");
  });

  it("colour and page corner", async () => {
    await load(PLACES);
    expect(await attributeOf("the red swatch button", "data-colour")).toBe("red");
    expect(await attributeOf("the violet button", "data-colour")).toBe("purple");
    expect(await attributeOf("the floating button in the bottom right corner", "data-fab")).toBe("yes");
  });
});

describe("what the element index reads off each control", () => {
  it("names colours as a person would, greys by lightness", async () => {
    const swatches: Array<[string, string]> = [
      ["#efefef", "gray"],
      ["#e4e4e4", "gray"],
      ["#fafafa", "white"],
      ["#222222", "black"],
      ["#8b4513", "brown"],
      ["#ff69b4", "pink"],
      ["#ffa500", "orange"],
      ["#008080", "teal"],
      ["#1e90ff", "blue"],
      ["#ffd700", "yellow"],
      ["#800080", "purple"],
      ["#2f855a", "green"],
      ["#c53030", "red"],
    ];
    const elements = await load(
      `<body>${swatches.map(([css], n) => `<button style="background:${css};width:20px;height:20px" data-n="${n}"></button>`).join("")}</body>`,
    );
    expect(elements.map((el) => el.backgroundColor)).toEqual(swatches.map(([, name]) => name));
  });

  it("reads the picture, icon words, roundness and surrounding box of a control", async () => {
    const elements = await load(`<body>
      <div style="background:#f1f1f1;padding:8px"><button id="a" style="border-radius:50%;width:30px;height:30px"><i class="fa fa-trash"></i></button></div>
      <a id="b" href="#x"><img src="img/user-avatar.png" style="width:20px;height:20px"></a>
      <span id="c" style="cursor:pointer;display:inline-block;width:20px;height:20px;background-image:url('icons/cart_empty.svg')"></span>
      <button id="d"><svg width="10" height="10"><use href="sprite.svg#icon-close"></use></svg></button>
    </body>`);
    const byId = (id: string) => elements.find((el) => el.id === id)!;
    expect(byId("a")).toMatchObject({ round: true, boxColor: "gray", media: "" });
    expect(byId("a").iconWords).toMatch(/fa-trash/);
    expect(byId("b")).toMatchObject({ media: "img", round: false });
    expect(byId("b").iconWords).toMatch(/user avatar/);
    expect(byId("c")).toMatchObject({ media: "background", boxColor: "" });
    expect(byId("c").iconWords).toMatch(/cart empty/);
    expect(byId("d")).toMatchObject({ media: "svg" });
    expect(byId("d").iconWords).toMatch(/icon close/);
  });
});

describe("the grounder's record", () => {
  it("is deterministic and says which rule decided", async () => {
    await load(PLACES);
    const runs = await Promise.all([1, 2, 3].map(() => ground("the Delete button under Eggs")));
    expect(new Set(runs.map((run) => run.answer.index)).size).toBe(1);
    expect(runs[0]?.answer.why).toMatch(/named by its own text.*3 fit equally well: 'under eggs': the nearest on that side/);
  });
});
