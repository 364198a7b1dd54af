import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { IwrError } from "../../src/errors.ts";
import { loadActionScript } from "../../src/recorder/script-schema.ts";
import { makeScratchDir, RECORDER_SCRIPT, RECORDER_SITE } from "../support/recorder-fixtures.ts";

const scratch = makeScratchDir("schema");
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

function loadText(name: string, text: string): IwrError {
  const file = path.join(scratch, name);
  fs.writeFileSync(file, text);
  try {
    loadActionScript(file);
  } catch (error) {
    if (error instanceof IwrError) return error;
    throw error;
  }
  throw new Error("expected the script to be rejected");
}

const HEADER = `source_website: "x"\nclassification: { interaction_complexity: L1, visual_complexity: V1, domain: d }\n`;

describe("action script schema", () => {
  it("loads the fixture script with defaults and resolves site: against the script folder's parent", () => {
    const loaded = loadActionScript(RECORDER_SCRIPT);
    expect(loaded.siteDir).toBe(RECORDER_SITE);
    expect(loaded.script.resolution).toBe("800x600");
    expect(loaded.script.environment).toMatch(/Chromium/);
    expect(loaded.script.actions.map((action) => action.type)).toEqual(["Click", "Type", "Press"]);
    expect(loaded.script.actions.map((action) => action.visual)).toEqual([true, false, true]);
  });

  it("names file, line, field and the bad value for a wrong action type", () => {
    const error = loadText(
      "bad-type.yaml",
      `${HEADER}actions:\n  - type: Click\n    locator: "#a"\n    description: a\n` +
        '  - type: Tap\n    locator: "#b"\n    description: b\n  - type: Scroll\n    description: c\n',
    );
    expect(error.code).toBe("RECORDER");
    expect(error.message).toContain(`${path.join(scratch, "bad-type.yaml")}:7:11: actions[1].type: expected one of Click|Type|Press|Scroll, got 'Tap'`);
  });

  it("rejects misspelt keys, a Type without text and a Click without locator", () => {
    const error = loadText(
      "bad-keys.yaml",
      `${HEADER}actions:\n  - type: Click\n    locatr: "#a"\n    description: a\n` +
        '  - type: Type\n    locator: "#b"\n    description: b\n  - type: Press\n    key: Enter\n    description: c\n',
    );
    expect(error.message).toMatch(/bad-keys\.yaml:5:\d+: actions\[0\]: unexpected key 'locatr'/);
    expect(error.message).toMatch(/bad-keys\.yaml:\d+:\d+: actions\[0\]\.locator: expected string, got nothing/);
    expect(error.message).toMatch(/bad-keys\.yaml:7:\d+: actions\[1\]\.text:/);
  });

  it("needs 3 to 12 actions", () => {
    const error = loadText("short.yaml", `${HEADER}actions:\n  - type: Scroll\n    description: a\n`);
    expect(error.message).toMatch(/short\.yaml:4:3: actions: a script needs 3 to 12 actions/);
  });

  it("reports broken YAML with its line", () => {
    const error = loadText("broken.yaml", `${HEADER}actions: [\n  - type: Click\n`);
    expect(error.message).toMatch(/broken\.yaml:\d+:\d+: YAML syntax error: /);
  });
});
