/**
 * The offline grounder on a real page's element index (real Chromium): the right
 * element among similar ones, quoted text winning over loose words, ordinals,
 * Type preferring fields, and "not found" below the threshold.
 */

import type { Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InteractiveElement, indexInteractiveElements } from "../../src/browser/element-index.ts";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { createHeuristicGrounder, keyFromDescription } from "../../src/replay/grounding/heuristic.ts";
import type { GroundingContext, GroundingQuery } from "../../src/replay/grounding/types.ts";

const PAGE = `<!doctype html><html><body>
  <nav><a href="#home">Home</a> <a href="#pricing" id="nav-pricing">Pricing</a> <a href="#about">About us</a></nav>
  <input id="search" type="search" placeholder="Search products">
  <div class="product"><h2>Tent</h2><button class="btn">Add to cart</button><button class="btn">Add to wishlist</button></div>
  <div class="product"><h2>Lantern</h2><button class="btn">Add to cart</button><button class="btn">Add to wishlist</button></div>
  <button class="btn" style="background:#2fa84f;color:#fff">Add</button>
  <button class="btn" style="background:#d93025;color:#fff">Add</button>
  <div class="btn" role="button" aria-label="Close dialog">×</div>
  <span class="icon-settings" style="cursor:pointer" title="Settings"><span>⚙</span></span>
  <button disabled>Disabled thing</button>
  <div style="display:none"><button>Hidden add</button></div>
  <div id="grid" style="display:grid;grid-template-columns:repeat(3,40px);gap:4px">
    ${Array.from({ length: 9 }, (_, i) => `<button class="btn tile" aria-label="tile" data-cell="${i}" style="width:40px;height:40px"></button>`).join("")}
  </div>
</body></html>`;

let page: Page;
let elements: InteractiveElement[];
const grounder = createHeuristicGrounder();

beforeAll(async () => {
  const browser = await sharedBrowser();
  page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
  await page.setContent(PAGE);
  elements = await indexInteractiveElements(page);
});

afterAll(async () => {
  await page?.close();
  await closeSharedBrowser();
});

function context(): GroundingContext {
  return {
    elements,
    accessibilityTree: () => Promise.reject(new Error("the heuristic must not need the accessibility tree")),
    highlightedScreenshot: () => Promise.reject(new Error("the heuristic must not need a screenshot")),
  };
}

async function pick(description: string, actionType: GroundingQuery["actionType"] = "Click", text?: string) {
  const answer = await grounder.locate({ actionType, description, ...(text !== undefined ? { text } : {}) }, context());
  const element = elements.find((el) => el.index === answer.index);
  return { answer, element };
}

describe("element index", () => {
  it("lists visible interactive elements with their labels, and skips hidden ones", () => {
    const texts = elements.flatMap((el) => [el.text, el.ariaLabel, el.title, el.placeholder]);
    expect(texts).toContain("Close dialog");
    expect(texts).toContain("Settings");
    expect(texts).toContain("Search products");
    expect(texts).not.toContain("Hidden add");
    // The pointer-cursor span counts once (its child inherits the cursor but is not listed).
    expect(elements.filter((el) => el.className === "icon-settings")).toHaveLength(1);
    expect(elements.find((el) => el.text === "Disabled thing")?.disabled).toBe(true);
  });
});

describe("heuristic grounding", () => {
  it("prefers the exact quoted text over longer texts that contain it", async () => {
    const { element } = await pick("the 'Add' button");
    expect(element?.text).toBe("Add");
    expect(element?.backgroundColor).toBe("green");
  });

  it("uses colour words to choose between identical texts", async () => {
    const { element } = await pick("the red 'Add' button at the bottom");
    expect(element?.text).toBe("Add");
    expect(element?.backgroundColor).toBe("red");
  });

  it("tells 'Add to cart' from 'Add to wishlist', and ordinals pick among equals", async () => {
    const first = await pick("the 'Add to cart' button");
    const second = await pick("the second 'Add to cart' button");
    expect(first.element?.text).toBe("Add to cart");
    expect(second.element?.text).toBe("Add to cart");
    expect(second.answer.index).toBeGreaterThan(first.answer.index);
    const wishlist = await pick("add the lantern to the wishlist");
    expect(wishlist.element?.text).toBe("Add to wishlist");
  });

  it("matches labels, titles and link text", async () => {
    expect((await pick("the close (x) icon of the dialog")).element?.ariaLabel).toBe("Close dialog");
    expect((await pick("the settings gear icon")).element?.title).toBe("Settings");
    expect((await pick("the 'Pricing' link in the top navigation bar")).element?.id).toBe("nav-pricing");
  });

  it("reads the text around an element to tell equal buttons apart", async () => {
    const { element } = await pick("the 'Add to cart' button under the Lantern");
    expect(element?.context).toContain("Lantern");
    const first = await pick("the 'Add to cart' button");
    expect(element?.index).not.toBe(first.answer.index);
  });

  it("finds grid positions: row, then place in the row", async () => {
    const cell = async (description: string) => {
      const { element } = await pick(description);
      return element ? await page.locator(`[data-iwr-idx="${element.index}"]`).getAttribute("data-cell") : undefined;
    };
    expect(await cell("the second tile in the third row")).toBe("7");
    expect(await cell("the last tile in the top row")).toBe("2");
    expect(await cell("the first tile in the middle row")).toBe("3");
  });

  it("grounds a Type action on the field and keeps the trajectory's text", async () => {
    const { answer, element } = await pick("the search box at the top", "Type", "tent");
    expect(element?.tag).toBe("input");
    expect(answer.text).toBe("tent");
  });

  it("answers -1 when nothing matches well enough", async () => {
    const { answer } = await pick("the 'Proceed to checkout' button");
    expect(answer.index).toBe(-1);
    expect(answer.reason).toMatch(/no element matches/);
    expect((await grounder.locate({ actionType: "Click", description: "the 'Add' button" }, { ...context(), elements: [] })).reason).toMatch(
      /no interactive elements/,
    );
  });

  it("is deterministic", async () => {
    const runs = await Promise.all([1, 2, 3].map(() => pick("the add to cart button")));
    expect(new Set(runs.map((run) => run.answer.index)).size).toBe(1);
  });

  it("names keys from descriptions", () => {
    expect(keyFromDescription("press the Enter key to submit")).toBe("Enter");
    expect(keyFromDescription("hit escape to close the menu")).toBe("Escape");
    expect(keyFromDescription("press 'k' to open search")).toBe("k");
    expect(keyFromDescription("press arrow down")).toBe("ArrowDown");
    expect(keyFromDescription("do something")).toBeUndefined();
  });
});
