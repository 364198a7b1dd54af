/**
 * The screen text a person reads (src/browser/screen-text.ts), in real Chromium: visible
 * text with its boxes, field values and placeholders, checked controls with their labels,
 * the focused control; never text that is hidden, transparent, off screen or covered.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { readScreenText, type ScreenText } from "../../src/browser/screen-text.ts";

let browser: Awaited<ReturnType<typeof sharedBrowser>>;
beforeAll(async () => {
  browser = await sharedBrowser();
});
afterAll(async () => {
  await closeSharedBrowser();
});

async function screenOf(html: string, act?: (page: import("playwright").Page) => Promise<void>): Promise<ScreenText> {
  const context = await browser.newContext({ viewport: { width: 600, height: 400 } });
  try {
    const page = await context.newPage();
    await page.setContent(html);
    await act?.(page);
    return await readScreenText(page);
  } finally {
    await context.close();
  }
}

const texts = (screen: ScreenText, kind = "text") => screen.items.filter((item) => item.kind === kind).map((item) => item.text);

describe("screen text", () => {
  it("keeps visible text with its box, and leaves out what a person cannot see", async () => {
    const screen = await screenOf(`<body style="margin:0;font:16px sans-serif">
      <p id="shown" style="margin:10px">Shown line</p>
      <p style="display:none">Not displayed</p>
      <p style="visibility:hidden">Hidden away</p>
      <p style="opacity:0">Fully transparent</p>
      <p style="color:rgba(0,0,0,0)">Invisible ink</p>
      <p style="position:absolute;top:900px">Below the fold</p>
      <p style="position:absolute;top:60px;left:10px;margin:0">Under a cover</p>
      <div style="position:absolute;top:50px;left:0;width:300px;height:50px;background:#fff"></div>
      <script>document.title = "Not on screen"</script>
    </body>`);
    expect(texts(screen)).toEqual(["Shown line"]);
    const [shown] = screen.items;
    expect(shown?.box.x).toBeGreaterThanOrEqual(9);
    expect(shown?.box.y).toBeGreaterThan(0);
    expect(screen.viewport).toEqual({ width: 600, height: 400 });
  });

  it("reads what fields show: values, a chosen option, a placeholder while empty; passwords masked", async () => {
    const screen = await screenOf(
      `<input id="a"><input id="b" placeholder="Search the shop"><input id="p" type="password">
       <select><option>Small</option><option selected>Large</option></select><textarea id="t"></textarea>`,
      async (page) => {
        await page.fill("#a", "42 apples");
        await page.fill("#p", "secret");
        await page.fill("#t", "A longer note");
      },
    );
    expect(texts(screen, "value").sort()).toEqual(["42 apples", "A longer note", "Large", "••••••"].sort());
    expect(texts(screen, "placeholder")).toEqual(["Search the shop"]);
  });

  it("gives checkboxes and radios their state and the label a person reads, and names the focused control", async () => {
    const screen = await screenOf(
      `<label><input type="radio" name="r" id="one" checked> First way</label>
       <label><input type="radio" name="r" id="two"> Second way</label>
       <input type="checkbox" id="c"> <span>Keep me posted</span>
       <label for="n">Your name</label> <input id="n">`,
      async (page) => {
        await page.click("#two");
        await page.focus("#n");
      },
    );
    expect(screen.controls.map((control) => [control.role, control.label, control.checked])).toEqual([
      ["radio", "First way", false],
      ["radio", "Second way", true],
      ["checkbox", "Keep me posted", false],
    ]);
    expect(screen.focused?.label).toBe("Your name");
  });
});
