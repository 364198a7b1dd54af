/**
 * Late timer changes (#30, a timer-driven page's checkpoints): the page-side watch notes a
 * DOM change made by a timer that was set before the latest picture, and nothing else;
 * the recorder records a page that makes one again under the stepped clock, and the
 * corrected replay of its reference page then takes exactly its checkpoints — which the
 * same page recorded under the shifted clock does not.
 */
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import type { BrowserContext, Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { type StaticServer, startStaticServer } from "../../src/browser/static-server.ts";
import { writeCalibrationCandidate } from "../../src/calibration/calibration.ts";
import { closeEvaluator } from "../../src/evaluator/create-evaluator.ts";
import { collectLateTimerChanges, LATE_TIMER_WATCH_SCRIPT, notePicture } from "../../src/recorder/late-timers.ts";
import { type RecordedTask, recordTask } from "../../src/recorder/record-task.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Task } from "../../src/tasks/schema.ts";
import { logoPng, makeScratchDir, recordOnePageSite, writeScript } from "../support/recorder-fixtures.ts";
import { evalpointPixels, pixelsOf, scoreCandidate } from "../support/score-candidate.ts";

const scratch = makeScratchDir("late-timers");

afterAll(async () => {
  await closeEvaluator();
  await closeSharedBrowser();
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe("the late-timer watch in a page", () => {
  let server: StaticServer;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    const site = path.join(scratch, "watch-site");
    fs.mkdirSync(site, { recursive: true });
    fs.writeFileSync(path.join(site, "index.html"), `<!doctype html><html><body><p id="out">start</p></body></html>`);
    server = await startStaticServer(site);
    context = await (await sharedBrowser()).newContext();
    await context.addInitScript(LATE_TIMER_WATCH_SCRIPT);
    page = await context.newPage();
    await page.goto(server.url("index.html"));
  });

  afterAll(async () => {
    await context.close();
    await server.close();
  });

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it("notes a change by a timer set before the picture, with its delay", async () => {
    await notePicture(page);
    await page.evaluate(() => {
      setTimeout(() => {
        document.getElementById("out")!.textContent = "changed later";
      }, 150);
    });
    await notePicture(page);
    await sleep(400);
    expect(await notePicture(page)).toEqual([{ delayMs: 150, count: 1 }]);
  });

  it("ignores a timer set and fired between two pictures, and one that changes nothing", async () => {
    await notePicture(page);
    await page.evaluate(() => {
      setTimeout(() => document.body.classList.toggle("flash"), 10);
      (window as unknown as { idle: number }).idle = 0;
      setTimeout(() => {
        (window as unknown as { idle: number }).idle += 1;
      }, 200);
    });
    await sleep(60);
    await notePicture(page);
    await sleep(400);
    expect(await notePicture(page)).toEqual([]);
  });

  it("follows a change made in the promise continuation a timer resolves (an awaited delay)", async () => {
    await notePicture(page);
    await page.evaluate(() => {
      void (async () => {
        await new Promise((resolve) => setTimeout(resolve, 120));
        document.getElementById("out")!.setAttribute("data-state", "gone");
      })();
    });
    await notePicture(page);
    await sleep(400);
    expect(await notePicture(page)).toHaveLength(1);
  });

  it("follows a change several promise steps after the timer (a delay awaited through async helpers)", async () => {
    await notePicture(page);
    await page.evaluate(() => {
      const wait = async (ms: number) => {
        await new Promise((resolve) => setTimeout(resolve, ms));
      };
      const waitTwice = async (ms: number) => {
        await wait(ms);
        await Promise.resolve();
      };
      void waitTwice(120).then(() => document.getElementById("out")!.classList.add("later"));
    });
    await notePicture(page);
    await sleep(400);
    expect(await notePicture(page)).toEqual([{ delayMs: 120, count: 1 }]);
  });

  it("keeps what it noted when asked between pictures, and forgets it once told", async () => {
    await notePicture(page);
    await page.evaluate(() => {
      setTimeout(() => {
        document.getElementById("out")!.textContent = "before the next action";
      }, 100);
    });
    await notePicture(page);
    await sleep(300);
    expect(await collectLateTimerChanges(page)).toEqual([{ delayMs: 100, count: 1 }]);
    expect(await notePicture(page)).toEqual([]);
  });

  it("notes an interval's tick that changes the page after a picture, counting from its previous tick", async () => {
    await notePicture(page);
    const id = await page.evaluate(() => {
      let ticks = 0;
      return setInterval(() => {
        ticks += 1;
        document.getElementById("out")!.textContent = `tick ${ticks}`;
      }, 100);
    });
    await sleep(250);
    await notePicture(page);
    await sleep(150);
    const late = await notePicture(page);
    await page.evaluate((interval) => clearInterval(interval), id);
    expect(late).toEqual([{ delayMs: 100, count: expect.any(Number) }]);
    expect(late[0]!.count).toBeGreaterThanOrEqual(1);
  });

  it("leaves the page's timers working: ids clear, string handlers and arguments pass through", async () => {
    const outcome = await page.evaluate(async () => {
      const seen: string[] = [];
      const cleared = setTimeout(() => seen.push("cleared one ran"), 20);
      clearTimeout(cleared);
      setTimeout((a: string, b: string) => seen.push(`${a}+${b}`), 10, "x", "y");
      // biome-ignore lint/suspicious/noExplicitAny: a string handler, as old pages still pass
      (setTimeout as any)("window.fromString = 1", 10);
      await new Promise((resolve) => setTimeout(resolve, 80));
      return { seen, fromString: (window as unknown as { fromString?: number }).fromString, idType: typeof cleared };
    });
    expect(outcome).toEqual({ seen: ["x+y"], fromString: 1, idType: "number" });
  });
});

/**
 * A notice that leaves on its own three seconds after it was shown (an awaited delay), then
 * a second action. Recorded with a person's pauses the notice has gone by the second
 * picture; replayed as fast as the page comes to rest, it has not.
 */
const NOTICE_PAGE = `<!doctype html><html><head><meta charset="utf-8"><style>
body { margin: 0; font-family: sans-serif; background: #f8fafc; }
header { display: flex; gap: 8px; align-items: center; padding: 8px; }
#notice { position: fixed; right: 16px; bottom: 16px; padding: 12px 18px; background: #065f46; color: #fff; border-radius: 6px; }
li { padding: 4px 8px; }
</style></head><body>
<header><img src="img/logo.png" width="32" height="32" alt="logo"><button id="save">Save draft</button><button id="add">Add line</button></header>
<ul id="lines"></ul>
<script>
  const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  document.getElementById("save").addEventListener("click", async () => {
    const notice = document.createElement("div");
    notice.id = "notice";
    notice.textContent = "Draft saved";
    document.body.append(notice);
    await pause(3000);
    notice.remove();
  });
  let count = 0;
  document.getElementById("add").addEventListener("click", () => {
    count += 1;
    const line = document.createElement("li");
    line.textContent = "Line " + count;
    document.getElementById("lines").append(line);
  });
</script></body></html>`;

const NOTICE_SCRIPT = {
  source_website: "fixture:leaving-notice",
  classification: { interaction_complexity: "L2", visual_complexity: "V1", domain: "testing" },
  resolution: "640x480",
  actions: [
    { type: "Click", locator: "#save", description: "press Save draft", assertion: "A notice says the draft was saved", visual: true },
    { type: "Click", locator: "#add", description: "press Add line", assertion: "Line 1 appears and the notice has gone", visual: true },
    { type: "Click", locator: "#add", description: "press Add line again", assertion: "Line 2 appears under Line 1", visual: false },
  ],
};

/** Long enough pauses that the notice leaves between the first picture and the second click, with a second to spare. */
const PERSON_PACE = { pauseBeforeMs: 2000, pauseAfterMs: 2000, pointerTravelMs: 40, keystrokeMs: 5 };

function recordNotice(label: string, clock: "auto" | "shifted"): Promise<{ recorded: RecordedTask; task: Task }> {
  return recordOnePageSite(scratch, label, { html: NOTICE_PAGE, logoColour: "#0f766e", script: NOTICE_SCRIPT, pacing: PERSON_PACE, clock });
}

/** The corrected profile's evalpoints of the task's own reference page, as raw pixels, beside its checkpoints. */
async function replayReference(task: Task, label: string): Promise<{ evalpoints: Buffer[]; checkpoints: Buffer[] }> {
  const candidateDir = writeCalibrationCandidate(task, path.join(scratch, `results-${label}`), "reference");
  await scoreCandidate(task, candidateDir, "reference");
  return {
    evalpoints: await Promise.all(task.truth.checkpointPaths.map((_, index) => evalpointPixels(candidateDir, index))),
    checkpoints: await Promise.all(task.truth.checkpointPaths.map(pixelsOf)),
  };
}

describe("a page whose pictures depend on the pace between actions", () => {
  it("is recorded again under the stepped clock, and its corrected replay takes exactly its checkpoints", async () => {
    const { recorded, task } = await recordNotice("auto", "auto");
    const notes = JSON.parse(fs.readFileSync(path.join(recorded.dir, "recording.json"), "utf8"));
    expect(notes.determinism.clock).toBe("stepped");
    expect(notes.determinism.clockWhy).toMatch(/changed itself 1 time\(s\) on a timer set before a picture \(delay 3000 ms\)/);
    expect(recorded.line.determinism?.stepped_clock?.before_action_ms).toHaveLength(3);
    expect(fs.readdirSync(path.dirname(recorded.dir)).filter((name) => name.startsWith("."))).toEqual([]);
    const { evalpoints, checkpoints } = await replayReference(task, "auto");
    for (const [index, checkpoint] of checkpoints.entries()) expect(evalpoints[index]!.equals(checkpoint), `evalpoint ${index}`).toBe(true);
  }, 120_000);

  it("under the shifted clock (asked for), the replay shows the notice the recording saw leave", async () => {
    const { recorded, task } = await recordNotice("shifted", "shifted");
    expect(recorded.line.determinism?.stepped_clock).toBeUndefined();
    const { evalpoints, checkpoints } = await replayReference(task, "shifted");
    expect(evalpoints[1]!.equals(checkpoints[1]!), "evalpoint 1: the notice just shown, in both").toBe(true);
    expect(evalpoints[2]!.equals(checkpoints[2]!), "evalpoint 2: the notice still there on replay").toBe(false);
  }, 120_000);

  it("keeps the first recording, with a warning, when the second one fails", async () => {
    // The page is served three times (the recorder reads its source, the preflight opens it, the
    // first recording opens it), then answers HTTP 500: the second recording fails as it opens.
    // If the recorder comes to load the page another number of times, `pageServed` below says so.
    const logo = await logoPng("#0f766e");
    let pageServed = 0;
    const server = http.createServer((request, response) => {
      const name = new URL(request.url ?? "/", "http://127.0.0.1").pathname;
      if (name === "/img/logo.png") return void response.writeHead(200, { "content-type": "image/png" }).end(logo);
      if (name !== "/" && name !== "/index.html") return void response.writeHead(404).end();
      pageServed += 1;
      if (pageServed > 3) return void response.writeHead(500, { "content-type": "text/plain" }).end("down for maintenance");
      response.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" }).end(NOTICE_PAGE);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const caseDir = fs.mkdtempSync(path.join(scratch, "fallback-"));
      const jsonl = path.join(caseDir, "set.jsonl");
      const { port } = server.address() as { port: number };
      const recorded = await recordTask({
        script: writeScript(caseDir, "actions.yaml", NOTICE_SCRIPT),
        site: `http://127.0.0.1:${port}/`,
        data: jsonl,
        pacing: PERSON_PACE,
      });
      expect(pageServed).toBe(4);
      expect(recorded.line.determinism?.stepped_clock).toBeUndefined();
      const failed = /delay 3000 ms\).*but recording it under the stepped clock failed \(the site failed to load\b.*\): it keeps the shifted clock/;
      expect(recorded.warnings.some((warning) => failed.test(warning))).toBe(true);
      const notes = JSON.parse(fs.readFileSync(path.join(recorded.dir, "recording.json"), "utf8"));
      expect(notes.determinism).toMatchObject({ clock: "shifted", clockWhy: expect.stringMatching(failed) });
      // The first recording is whole: every checkpoint and the video are there, and nothing is left beside the task.
      const task = (await loadTasks(jsonl))[0]!;
      expect(task.truth.checkpointPaths.every((file) => fs.statSync(file).size > 0)).toBe(true);
      expect(fs.existsSync(path.join(recorded.dir, "video.mp4"))).toBe(true);
      expect(fs.readdirSync(path.dirname(recorded.dir)).filter((name) => name.startsWith("."))).toEqual([]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }, 120_000);
});
