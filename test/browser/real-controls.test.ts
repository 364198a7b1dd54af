/**
 * Control patterns of real sites, each indexed, described by what a person reads, and
 * clicked (or typed into) through the replay engine by both grounders (issue #15 point
 * 3), in real Chromium on pages served from 127.0.0.1: transparent custom checkboxes
 * under their labels, open shadow roots, contenteditable, ARIA-role widgets, SVG icon
 * buttons, and a button half under a sticky header.
 *
 * The llm grounder talks to the local fake OpenAI server; its "model" answers the
 * element-list line that carries what the description names, so the test shows the
 * model is given that text and the engine acts on the line's element.
 */
import fs from "node:fs";
import path from "node:path";
import type { Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatElementList, harnessVisibleElements, type InteractiveElement, indexInteractiveElements } from "../../src/browser/element-index.ts";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { type StaticServer, startStaticServer } from "../../src/browser/static-server.ts";
import { createModelClient, ModelSpecSchema } from "../../src/models/index.ts";
import { PROFILE_RULES } from "../../src/protocol.ts";
import { createHeuristicGrounder } from "../../src/replay/grounding/heuristic.ts";
import { createLlmGrounder } from "../../src/replay/grounding/llm.ts";
import type { Grounder } from "../../src/replay/grounding/types.ts";
import { type ReplayAction, type ReplayResult, type ReplayStyle, replayTrajectory } from "../../src/replay/replay.ts";
import { makeTempDir } from "../support/browser-fixtures.ts";
import { type FakeOpenAIServer, messageParts, type RecordedRequest, startOpenAIServer } from "../support/openai-server.ts";

const VIEWPORT = { width: 640, height: 480 };
const NO_WAITS = { initialSettleMs: 0, actionSettleMs: 0, screenshotDelayMs: 0, scrollExtraSettleMs: 0 };
/** Our action semantics (src/browser/actions.ts) and the harness's (src/browser/harness-actions.ts), without the settle waits. */
const CORRECTED: ReplayStyle = { ...PROFILE_RULES.corrected, timings: NO_WAITS };
const OFFICIAL: ReplayStyle = { ...PROFILE_RULES.official, timings: NO_WAITS };

const PAGES: Record<string, string> = {
  "checkboxes.html":
    `<!doctype html><html><head><style>
    body { font: 16px sans-serif; margin: 16px; }
    .custom { position: relative; display: inline-flex; align-items: center; gap: 8px; padding: 6px; cursor: pointer; }
    .custom input { position: absolute; opacity: 0; left: 6px; top: 6px; width: 20px; height: 20px; margin: 0; }
    .custom .box { position: relative; z-index: 1; width: 20px; height: 20px; border: 2px solid #333; border-radius: 4px; }
    .custom input:checked + .box { background: #2a6df4; }
    .switch { position: relative; height: 32px; margin: 8px 0; }
    .switch input { position: absolute; opacity: 0; left: 0; top: 4px; width: 44px; height: 24px; margin: 0; }
    .switch label { position: absolute; left: 0; top: 0; height: 32px; line-height: 32px; padding-left: 54px; background: #ddd; border-radius: 16px; }
    .todo { list-style: none; padding: 0; width: 360px; }
    .todo li { position: relative; border-bottom: 1px solid #eee; }
    .todo .toggle { opacity: 0; position: absolute; top: 0; bottom: 0; margin: auto 0; width: 40px; height: 40px; }
    .todo label { display: block; padding: 15px 15px 15px 60px; background: #fafafa; }
  </style></head><body>
    <label class="custom"><input type="checkbox" id="remember"><span class="box"></span><span>Remember me</span></label>
    <div class="switch"><input type="checkbox" id="dark"><label for="dark">Dark mode</label></div>
    <fieldset><legend>Size</legend>
      <label class="custom"><input type="radio" name="size" id="small"><span class="box"></span><span>Small</span></label>
      <label class="custom"><input type="radio" name="size" id="large"><span class="box"></span><span>Large</span></label>
    </fieldset>
    <ul class="todo"><li><input class="toggle" type="checkbox" id="milk"><label>Buy milk</label></li>` +
    `<li><input class="toggle" type="checkbox" id="dog"><label>Walk the dog</label></li></ul>
  </body></html>`,
  "shadow.html": `<!doctype html><html><body style="font: 16px sans-serif">
    <app-shell></app-shell>
    <p id="status">Not saved</p>
    <script>
      let saves = 0;
      customElements.define("save-bar", class extends HTMLElement {
        constructor() {
          super();
          const root = this.attachShadow({ mode: "open" });
          root.innerHTML = '<style>button { padding: 8px 16px; }</style><div class="bar"><span>Draft</span> <button id="save">Save draft</button></div>';
          root.getElementById("save").addEventListener("click", () => { document.getElementById("status").textContent = "Saved " + (++saves); });
        }
      });
      // A shadow root inside a shadow root: the save bar lives in the app shell's.
      customElements.define("app-shell", class extends HTMLElement {
        constructor() { super(); this.attachShadow({ mode: "open" }).innerHTML = "<header><h1>Editor</h1><save-bar></save-bar></header>"; }
      });
    </script>
  </body></html>`,
  "editable.html": `<!doctype html><html><body style="font: 16px sans-serif; margin: 16px">
    <h2 id="notes-title">Meeting notes</h2>
    <div id="notes" contenteditable="true" aria-labelledby="notes-title" style="min-height: 80px; border: 1px solid #999; padding: 8px"><p>Old text</p></div>
    <div id="comment" contenteditable="plaintext-only" aria-label="Comment" style="min-height: 40px; border: 1px solid #999; margin-top: 12px"></div>
  </body></html>`,
  "roles.html": `<!doctype html><html><head><style>
    body { font: 16px sans-serif; margin: 16px; }
    [role] { display: inline-block; padding: 6px 10px; margin: 4px; border: 1px solid #888; cursor: default; }
    [role="tablist"], [role="menu"] { border: 0; padding: 0; }
  </style></head><body>
    <div role="button" tabindex="0">Archive</div>
    <span role="link" tabindex="0">Open settings</span>
    <div role="checkbox" aria-checked="false" tabindex="0">Notify me</div>
    <div role="tablist"><div role="tab">Overview</div><div role="tab">Reviews</div></div>
    <div role="menu"><div role="menuitem">Duplicate</div><div role="menuitem">Rename</div></div>
    <p id="log"></p>
    <script>
      // Clicks are heard on the document, as frameworks delegate them: nothing marks these elements but their role.
      document.addEventListener("click", (event) => {
        const control = event.target.closest("[role]:not([role=tablist]):not([role=menu])");
        if (control) document.getElementById("log").textContent += control.textContent + ";";
      });
    </script>
  </body></html>`,
  "icons.html":
    `<!doctype html><html><head><style>
    body { font: 16px sans-serif; margin: 16px; }
    button, [role=button] { display: inline-block; padding: 6px; margin: 4px; }
    .trash { cursor: pointer; margin: 4px; }
  </style></head><body>
    <button class="toolbar-btn" onclick="note('search')"><svg aria-label="Search" width="20" height="20" viewBox="0 0 20 20">` +
    `<circle cx="9" cy="9" r="6" fill="none" stroke="#000"/></svg></button>
    <div role="button" onclick="note('settings')"><svg width="20" height="20" viewBox="0 0 20 20"><title>Settings</title>` +
    `<rect x="4" y="4" width="12" height="12"/></svg></div>
    <button onclick="note('share')"><svg title="Share" width="20" height="20" viewBox="0 0 20 20"><path d="M2 10 L18 2 L18 18 Z"/></svg></button>
    <svg class="trash" width="24" height="24" viewBox="0 0 24 24"><title>Delete item</title><style>.lid { fill: #c00; }</style>` +
    `<rect class="lid" x="4" y="4" width="16" height="16"/></svg>
    <svg onclick="note('star')" width="24" height="24" viewBox="0 0 24 24"><title>Add to favourites</title><circle cx="12" cy="12" r="10"/></svg>
    <p id="log"></p>
    <script>
      function note(what) { document.getElementById("log").textContent += what + ";"; }
      document.querySelector(".trash").addEventListener("click", () => note("delete"));
    </script>
  </body></html>`,
  // After one Scroll (half the 480 px viewport) the button's top 30 of 50 px lie under the 60 px sticky header.
  "sticky.html": `<!doctype html><html><head><style>
    body { margin: 0; font: 16px sans-serif; }
    header { position: sticky; top: 0; height: 60px; background: #222; color: #fff; z-index: 10; }
    .intro { height: 210px; }
    #buy { display: block; height: 50px; width: 200px; margin: 0 0 0 40px; }
    .tail { height: 1200px; }
  </style></head><body>
    <header>Store</header>
    <div class="intro">Welcome</div>
    <button id="buy">Buy now</button>
    <p id="bought">0 bought</p>
    <div class="tail"></div>
    <script>
      let bought = 0;
      window.headerClicks = 0;
      window.buyClicksAt = [];
      document.querySelector("header").addEventListener("click", () => { window.headerClicks++; });
      document.getElementById("buy").addEventListener("click", (event) => {
        window.buyClicksAt.push(event.clientY);
        document.getElementById("bought").textContent = ++bought + " bought";
      });
    </script>
  </body></html>`,
};

let server: StaticServer;
let model: FakeOpenAIServer;
let siteDir: string;
let evalpointsRoot: string;
let replays = 0;
const openPages: Page[] = [];
const tempDirs: string[] = [];
let lineToAnswer: RegExp | undefined;
let textToAnswer: string | undefined;

/** The fake model's one skill: answer the element-list line that matches the test's pattern (-1 when none does). */
function answerMatchingLine(request: RecordedRequest): string {
  const prompt = messageParts(request)
    .map((part) => (part.type === "text" ? String(part.text) : ""))
    .join("\n");
  const line = prompt.split("\n").find((candidate) => /^\[\d+\] </.test(candidate) && lineToAnswer?.test(candidate));
  const index = line ? /^\[(\d+)\]/.exec(line)?.[1] : undefined;
  if (index === undefined) return "-1";
  return textToAnswer !== undefined ? `${index},${JSON.stringify(textToAnswer)}` : index;
}

beforeAll(async () => {
  siteDir = makeTempDir("real-controls");
  evalpointsRoot = makeTempDir("real-controls-evalpoints");
  tempDirs.push(siteDir, evalpointsRoot);
  for (const [name, html] of Object.entries(PAGES)) fs.writeFileSync(path.join(siteDir, name), html);
  [server, model] = await Promise.all([startStaticServer(siteDir), startOpenAIServer({ reply: answerMatchingLine })]);
});

afterAll(async () => {
  await Promise.all(openPages.map((page) => page.close().catch(() => undefined)));
  await closeSharedBrowser();
  await Promise.all([server?.close(), model?.close()]);
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function open(name: string): Promise<Page> {
  const browser = await sharedBrowser();
  const page = await browser.newPage({ viewport: VIEWPORT });
  openPages.push(page);
  await page.goto(server.url(name));
  return page;
}

const heuristic = createHeuristicGrounder();
function llm(): Grounder {
  const spec = ModelSpecSchema.parse({ name: "gpt-4o", baseURL: model.baseURL, apiKeyEnv: "none", maxRetries: 0, timeoutMs: 10_000 });
  return createLlmGrounder({ client: createModelClient(spec) });
}

async function replay(page: Page, grounder: Grounder, actions: ReplayAction[], style: ReplayStyle = CORRECTED): Promise<ReplayResult> {
  const result = await replayTrajectory({
    // The evalpoints are not what these tests look at: no screenshot is taken, to keep the file fast.
    surface: { page, screenshot: async () => Buffer.alloc(0), withTimeout: (_label, _ms, run) => run() },
    actions,
    grounder,
    style,
    evalpointsDir: path.join(evalpointsRoot, String(++replays)),
  });
  expect(result.steps.map((step) => step.reason ?? "ok")).toEqual(actions.map(() => "ok"));
  return result;
}

/** Replays one action with the llm grounder, its fake model answering the line that matches `line`. */
async function replayWithModel(page: Page, action: ReplayAction, line: RegExp, typed?: string): Promise<ReplayResult> {
  lineToAnswer = line;
  textToAnswer = typed;
  try {
    return await replay(page, llm(), [action]);
  } finally {
    lineToAnswer = undefined;
    textToAnswer = undefined;
  }
}

const click = (description: string): ReplayAction => ({ type: "Click", description });

async function checked(page: Page): Promise<Record<string, boolean>> {
  return page.evaluate(() => Object.fromEntries(Array.from(document.querySelectorAll("input"), (input) => [input.id, input.checked])));
}

function withLabel(elements: readonly InteractiveElement[], label: string): InteractiveElement | undefined {
  return elements.find((el) => el.label === label && el.tag !== "label");
}

describe("real controls in the element index", () => {
  it("a transparent checkbox or radio under its visible label: indexed by the label's words, and clicking it toggles it", async () => {
    const page = await open("checkboxes.html");
    const elements = await indexInteractiveElements(page);
    for (const [label, role] of [
      ["Remember me", "checkbox"],
      ["Dark mode", "checkbox"],
      ["Large", "radio"],
      ["Buy milk", "checkbox"],
    ] as const) {
      expect(withLabel(elements, label), label).toMatchObject({ tag: "input", role });
    }
    expect(formatElementList(elements)).toMatch(/<input role="checkbox" type="checkbox" id="remember" label="Remember me"/);
    // What a user's click there hits: the custom box (inside the label) over one input, the label over another, TodoMVC's input itself.
    const hits = await page.evaluate(() =>
      ["remember", "dark", "milk"].map((id) => {
        const box = document.getElementById(id)!.getBoundingClientRect();
        const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2)!;
        return hit.id || hit.tagName.toLowerCase() + (hit.className ? `.${hit.className}` : "");
      }),
    );
    expect(hits).toEqual(["span.box", "label", "milk"]);

    const actions = [
      click("the 'Remember me' checkbox"),
      click("the 'Dark mode' checkbox"),
      click("the 'Large' radio button"),
      click("the checkbox next to 'Buy milk'"),
    ];
    const byHeuristic = await replay(page, heuristic, actions);
    expect(byHeuristic.steps.map((step) => step.target?.role)).toEqual(["checkbox", "checkbox", "radio", "checkbox"]);
    expect(await checked(page)).toEqual({ remember: true, dark: true, small: false, large: true, milk: true, dog: false });

    await replayWithModel(page, click("the 'Remember me' checkbox"), /type="checkbox".*label="Remember me"/);
    await replayWithModel(page, click("the 'Dark mode' checkbox"), /type="checkbox".*label="Dark mode"/);
    await replayWithModel(page, click("the 'Small' radio button"), /type="radio".*label="Small"/);
    await replayWithModel(page, click("the checkbox next to 'Buy milk'"), /type="checkbox".*label="Buy milk"/);
    expect(await checked(page)).toEqual({ remember: false, dark: false, small: true, large: false, milk: false, dog: false });

    // The harness's semantics: its list keeps only top-most elements, so the covered inputs are reached through their labels.
    await replay(page, heuristic, actions, OFFICIAL);
    expect(await checked(page)).toEqual({ remember: true, dark: true, small: false, large: true, milk: true, dog: false });
  });

  it("a button inside (nested) open shadow roots: indexed, described, clickable", async () => {
    const page = await open("shadow.html");
    const elements = await indexInteractiveElements(page);
    const save = elements.find((el) => el.text === "Save draft");
    expect(save).toMatchObject({ tag: "button", role: "button", topMost: true });
    expect(save?.context).toContain("Draft");
    expect(harnessVisibleElements(elements)).toContainEqual(save);

    const byHeuristic = await replay(page, heuristic, [click("the 'Save draft' button")]);
    expect(byHeuristic.steps[0]?.target?.text).toBe("Save draft");
    expect(await page.locator("#status").innerText()).toBe("Saved 1");
    await replayWithModel(page, click("the 'Save draft' button"), /<button id="save"> "Save draft"/);
    expect(await page.locator("#status").innerText()).toBe("Saved 2");
    await replay(page, heuristic, [click("the 'Save draft' button")], OFFICIAL);
    expect(await page.locator("#status").innerText()).toBe("Saved 3");
    // Indexing again leaves one numbered element per number, in the shadow roots too.
    const again = await indexInteractiveElements(page);
    expect(await page.locator(`[data-iwr-idx="${again.find((el) => el.text === "Save draft")?.index}"]`).count()).toBe(1);
  });

  it("contenteditable elements: indexed as text boxes, named by their labels, typed into", async () => {
    const page = await open("editable.html");
    const elements = await indexInteractiveElements(page);
    expect(elements.find((el) => el.id === "notes")).toMatchObject({ role: "textbox", label: "Meeting notes", text: "Old text" });
    expect(elements.find((el) => el.id === "comment")).toMatchObject({ role: "textbox", ariaLabel: "Comment" });
    const notes = () => page.locator("#notes").innerText();
    const comment = () => page.locator("#comment").innerText();

    const byHeuristic = await replay(page, heuristic, [
      { type: "Type", description: "Type 'Buy oat milk' into the meeting notes editor" },
      { type: "Type", description: "the comment box", text: "Looks good" },
    ]);
    expect(byHeuristic.steps.map((step) => step.target?.role)).toEqual(["textbox", "textbox"]);
    expect([await notes(), await comment()]).toEqual(["Buy oat milk", "Looks good"]);

    await replayWithModel(page, { type: "Type", description: "the meeting notes editor", text: "Agenda" }, /role="textbox".*label="Meeting notes"/, "Agenda");
    expect(await notes()).toBe("Agenda");
    await replay(page, heuristic, [{ type: "Type", description: "the comment box", text: "Ship it" }], OFFICIAL);
    expect(await comment()).toBe("Ship it");
  });

  it("ARIA-role widgets (button, link, checkbox, tab, menuitem) with text: indexed and clickable", async () => {
    const page = await open("roles.html");
    const elements = await indexInteractiveElements(page);
    const roleOf = (text: string) => elements.find((el) => el.text === text)?.role;
    expect(["Archive", "Open settings", "Notify me", "Reviews", "Duplicate"].map(roleOf)).toEqual(["button", "link", "checkbox", "tab", "menuitem"]);
    const log = () => page.locator("#log").innerText();

    await replay(page, heuristic, [
      click("the 'Archive' button"),
      click("the 'Open settings' link"),
      click("the 'Notify me' checkbox"),
      click("the 'Reviews' tab"),
      click("the 'Duplicate' menu item"),
    ]);
    expect(await log()).toBe("Archive;Open settings;Notify me;Reviews;Duplicate;");
    await replayWithModel(page, click("the 'Rename' menu item"), /role="menuitem"> "Rename"/);
    await replayWithModel(page, click("the 'Overview' tab"), /role="tab"> "Overview"/);
    expect(await log()).toMatch(/Duplicate;Rename;Overview;$/);
    await replay(page, heuristic, [click("the 'Archive' button")], OFFICIAL);
    expect(await log()).toMatch(/Overview;Archive;$/);
  });

  it("SVG icons as buttons: named by their aria-label, title or <title>, and clickable", async () => {
    const page = await open("icons.html");
    const elements = await indexInteractiveElements(page);
    expect(withLabel(elements, "Search")).toMatchObject({ tag: "button", text: "" });
    expect(withLabel(elements, "Settings")).toMatchObject({ tag: "div", role: "button" });
    expect(withLabel(elements, "Share")).toMatchObject({ tag: "button" });
    // A bare svg: its <title> names it; its <style> and <title> are not shown text.
    expect(withLabel(elements, "Delete item")).toMatchObject({ tag: "svg", text: "", className: "trash" });
    expect(withLabel(elements, "Add to favourites")).toMatchObject({ tag: "svg", text: "" });
    // Only the top of each icon is listed, not its shapes.
    expect(elements.filter((el) => ["rect", "circle", "path"].includes(el.tag))).toEqual([]);
    const log = () => page.locator("#log").innerText();

    await replay(page, heuristic, [
      click("the search icon button"),
      click("the settings icon"),
      click("the share button"),
      click("the 'Delete item' icon"),
      click("the add to favourites star"),
    ]);
    expect(await log()).toBe("search;settings;share;delete;star;");
    await replayWithModel(page, click("the settings icon"), /role="button" label="Settings"/);
    await replayWithModel(page, click("the trash icon"), /<svg class="trash" label="Delete item">/);
    expect(await log()).toMatch(/star;settings;delete;$/);
    await replay(page, heuristic, [click("the search icon button")], OFFICIAL);
    expect(await log()).toMatch(/delete;search;$/);
  });

  it("a button partly under a sticky header: the click lands on its visible part, not on the header", async () => {
    const page = await open("sticky.html");
    const scrollThenBuy: ReplayAction[] = [{ type: "Scroll", description: "scroll down" }, click("the 'Buy now' button")];
    for (const [round, run] of [
      [1, () => replay(page, heuristic, scrollThenBuy)],
      [
        2,
        async () => {
          await replay(page, heuristic, [scrollThenBuy[0]!]);
          return replayWithModel(page, scrollThenBuy[1]!, /<button id="buy"> "Buy now"/);
        },
      ],
    ] as const) {
      await page.evaluate(() => window.scrollTo(0, 0));
      await run();
      const seen = await page.evaluate(() => {
        const box = document.getElementById("buy")!.getBoundingClientRect();
        const at = (fy: number) => document.elementFromPoint(box.x + box.width / 2, box.y + box.height * fy)?.tagName.toLowerCase();
        const win = window as unknown as { headerClicks: number; buyClicksAt: number[] };
        return { scrollY: window.scrollY, top: box.top, hits: [at(0.1), at(0.5), at(0.9)], headerClicks: win.headerClicks, lastClickY: win.buyClicksAt.at(-1) };
      });
      // The page did not move to make room: the button is still half under the header, and the click went below it.
      expect(seen).toMatchObject({ scrollY: 240, top: 30, hits: ["header", "header", "button"], headerClicks: 0 });
      expect(seen.lastClickY).toBeGreaterThanOrEqual(60);
      expect(seen.lastClickY).toBeLessThan(80);
      expect(await page.locator("#bought").innerText()).toBe(`${round} bought`);
    }
    // Still listed (the harness's top-most filter is its own matter): the centre is the header's.
    const elements = await indexInteractiveElements(page);
    expect(elements.find((el) => el.text === "Buy now")).toMatchObject({ topMost: false, inViewport: true });
  });
});
