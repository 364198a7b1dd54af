/**
 * The oracle's page facts in real Chromium: a drawing on a visible canvas is part of what a
 * step changes (a game drawn on a canvas changes nothing else in the DOM), and a hidden
 * canvas is not, as hidden text is not.
 */
import type { Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { factsProbe, type PageFacts } from "../../src/mutants/oracle.ts";

const PAGE = `<!doctype html><html><body style="margin:0">
<p>Score: 3</p>
<canvas id="board" width="640" height="360"></canvas>
<script>
  const ctx = document.getElementById("board").getContext("2d");
  window.drawRing = (x) => {
    ctx.fillStyle = "#111"; ctx.fillRect(0, 0, 640, 360);
    ctx.beginPath(); ctx.strokeStyle = "#fff"; ctx.lineWidth = 3; ctx.arc(x, 180, 10, 0, 2 * Math.PI); ctx.stroke();
  };
  drawRing(200);
</script></body></html>`;

let page: Page;
const facts: PageFacts[] = [];
const read = async (index: number) => {
  await factsProbe(facts)(index, page);
  return facts[index]!;
};

beforeAll(async () => {
  const context = await (await sharedBrowser()).newContext({ viewport: { width: 800, height: 600 } });
  page = await context.newPage();
  await page.setContent(PAGE);
});

afterAll(async () => {
  await page?.context().close();
  await closeSharedBrowser();
});

describe("the oracle's page facts", () => {
  it("tell a visible canvas's drawing apart when a small ring moves 20 pixels, and the same drawing alike", async () => {
    const before = await read(0);
    await page.evaluate(() => (window as unknown as { drawRing(x: number): void }).drawRing(220));
    const moved = await read(1);
    expect(moved.text).toBe(before.text);
    expect(moved.signature).not.toBe(before.signature);
    await page.evaluate(() => (window as unknown as { drawRing(x: number): void }).drawRing(200));
    expect((await read(2)).signature).toBe(before.signature);
  });

  it("leave a hidden canvas out: its drawing changes nothing that shows", async () => {
    await page.evaluate(() => document.getElementById("board")!.style.setProperty("visibility", "hidden"));
    const hidden = await read(3);
    await page.evaluate(() => (window as unknown as { drawRing(x: number): void }).drawRing(260));
    expect((await read(4)).signature).toBe(hidden.signature);
  });
});
