/**
 * The agent's pure parts: search/replace edits, replies that must be JSON of a shape,
 * the recursion limit derived from the budget, and the settings' hash.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { applyEdits, parseEdits } from "../../agents/reconstruct/edits.ts";
import { parseJsonReply } from "../../agents/reconstruct/json-reply.ts";
import { worstPairs } from "../../agents/reconstruct/self-check-feedback.ts";
import { AgentSettingsSchema, recursionLimitFor, settingsHash } from "../../agents/reconstruct/settings.ts";
import { actionsOfStoryboard, StoryboardSchema } from "../../agents/reconstruct/storyboard.ts";
import { withoutDevServerPreload } from "../../agents/reconstruct/studio-workers.ts";
import type { SelfCheckRecord } from "../../src/selfcheck/self-check.ts";

const PAGE = "<html>\n<body>\n<h1>Cart</h1>\n<p>Total: 0</p>\n<p>Total: 0</p>\n</body>\n</html>\n";

describe("search/replace edits", () => {
  it("applies edits whose SEARCH part occurs once, in order", () => {
    const reply =
      "Here:\n<<<<<<< SEARCH\n<h1>Cart</h1>\n=======\n<h1>Your cart</h1>\n>>>>>>> REPLACE\n" +
      '<<<<<<< SEARCH\n<body>\n<h1>Your cart</h1>\n=======\n<body class="shop">\n<h1>Your cart</h1>\n>>>>>>> REPLACE\n';
    const outcome = applyEdits(PAGE, parseEdits(reply));
    expect(outcome).toMatchObject({ proposed: 2, applied: 2, failed: [] });
    expect(outcome.page).toContain('<body class="shop">\n<h1>Your cart</h1>');
  });

  it("applies nothing when any edit is missing or ambiguous, and says which", () => {
    const ambiguous = applyEdits(PAGE, parseEdits("<<<<<<< SEARCH\n<p>Total: 0</p>\n=======\n<p>Total: 5</p>\n>>>>>>> REPLACE"));
    expect(ambiguous.page).toBeUndefined();
    expect(ambiguous.failed[0]).toMatch(/occurs more than once/);
    const missing = applyEdits(PAGE, parseEdits("<<<<<<< SEARCH\n<h2>none</h2>\n=======\nx\n>>>>>>> REPLACE"));
    expect(missing.failed[0]).toMatch(/is not in the page/);
    expect(applyEdits(PAGE, parseEdits("I would change the title.")).failed).toEqual(["the reply holds no SEARCH/REPLACE block"]);
  });
});

describe("JSON replies", () => {
  it("takes the fenced block, or the outermost braces, and validates the shape", () => {
    const storyboard = parseJsonReply(
      'Sure.\n```json\n{"actions":[{"type":"Type","target":"the search box","text":"milk","effect":"results"}]}\n```',
      StoryboardSchema,
      "analyze",
    );
    expect(actionsOfStoryboard(storyboard)).toEqual([{ type: "Type", description: "the search box", text: "milk" }]);
    expect(parseJsonReply('{"regions": []} and more', StoryboardSchema, "analyze").regions).toEqual([]);
  });

  it("garbage is a MODEL_REPLY error naming what is wrong", () => {
    expect(() => parseJsonReply("<html>no json</html>", StoryboardSchema, "analyze")).toThrow(/analyze: the reply holds no JSON object/);
    expect(() => parseJsonReply("```json\n{oops}\n```", StoryboardSchema, "analyze")).toThrow(/does not parse/);
    expect(() => parseJsonReply('{"actions":[{"type":"Hover","target":"x"}]}', StoryboardSchema, "analyze")).toThrow(
      /not the expected shape: actions\[0\]\.type/,
    );
  });
});

describe("settings", () => {
  it("derive the recursion limit from the iteration budget, never LangGraph's 25", () => {
    expect(recursionLimitFor({ maxIterations: 0 })).toBeGreaterThanOrEqual(5);
    expect(recursionLimitFor({ maxIterations: 10 })).toBeGreaterThan(5 + 4 * 10);
  });

  it("hash what changes a result, and refuse unknown switches", () => {
    const base = AgentSettingsSchema.parse({});
    expect(settingsHash(base)).toBe(settingsHash(AgentSettingsSchema.parse({ breadth: 1 })));
    expect(settingsHash(base)).not.toBe(settingsHash(AgentSettingsSchema.parse({ breadth: 2 })));
    expect(() => AgentSettingsSchema.parse({ bredth: 2 })).toThrow();
  });
});

describe("worker options inside LangGraph's dev server", () => {
  const tsx = ["--require", "/repo/node_modules/tsx/dist/preflight.cjs", "--import", "file:///repo/node_modules/tsx/dist/loader.mjs"];

  it("drops the dev server's preload in either form, as a path or a file URL, and keeps every other option", () => {
    expect(withoutDevServerPreload([...tsx, "--import", "file:///repo/node_modules/@langchain/langgraph-api/dist/preload.mjs"])).toEqual(tsx);
    expect(withoutDevServerPreload(["--import=/repo/node_modules/@langchain/langgraph-api/dist/preload.mjs", ...tsx])).toEqual(tsx);
    expect(withoutDevServerPreload(["--import", "C:\\repo\\node_modules\\@langchain\\langgraph-api\\dist\\preload.mjs"])).toEqual([]);
  });

  it("leaves other imports, and a process without the preload, as they are", () => {
    const others = [...tsx, "--import", "file:///repo/preload.mjs", "--import=./langgraph-api/dist/other.mjs"];
    expect(withoutDevServerPreload(others)).toEqual(others);
    expect(withoutDevServerPreload([])).toEqual([]);
  });
});

describe("the self-check's pairs for the critic", () => {
  it("puts the screenshots the costliest findings name first, then the least similar ones; one pair per screenshot, missing files skipped", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-worst-pairs-"));
    try {
      const frame = (name: string) => {
        const file = path.join(dir, `${name}.png`);
        fs.writeFileSync(file, "frame");
        return file;
      };
      fs.mkdirSync(path.join(dir, "self-check"));
      for (const index of [0, 1, 2, 3]) fs.writeFileSync(path.join(dir, "self-check", `${index}.png`), "shot");
      const states = [frame("s0"), frame("s1"), frame("s2"), path.join(dir, "gone.png")].map((framePath, index) => ({
        index,
        startSec: index,
        endSec: index + 1,
        frameSec: index,
        framePath,
      }));
      const similarity = (combined: number) => ({ text: combined, image: combined, combined });
      const record = {
        findings: [{ kind: "behaviour", cost: 0.3, message: "action 2 changed nothing", screenshot: "self-check/2.png", videoFrame: states[2]!.framePath }],
        steps: [
          { similarity: similarity(0.9), state: 1 },
          { similarity: similarity(0.2), state: 2 },
          { similarity: similarity(0.4), state: 1 },
        ],
        video: { states },
        page: { screenshots: ["self-check/0.png", "self-check/1.png", "self-check/2.png", "self-check/3.png"] },
        initial: { state: 3, similarity: similarity(0.1) },
      } as unknown as SelfCheckRecord;
      const pairs = worstPairs(record, dir);
      expect(pairs.map((pair) => [path.basename(pair.screenshot), path.basename(pair.reference), pair.caption])).toEqual([
        ["2.png", "s2.png", "action 2 changed nothing"],
        ["3.png", "s1.png", "after action 3: similarity 0.40"],
        ["1.png", "s1.png", "after action 1: similarity 0.90"],
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
