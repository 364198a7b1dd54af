/**
 * Helpers for the recorder's tests: a scratch folder, action scripts written from
 * objects, and a listing of a folder to prove nothing was left behind.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { stringify } from "yaml";
import type { PageClock } from "../../src/browser/stepped-clock.ts";
import type { RecorderPacing } from "../../src/recorder/perform.ts";
import { type RecordedTask, recordTask } from "../../src/recorder/record-task.ts";
import { loadTasks } from "../../src/tasks/loader.ts";
import type { Task } from "../../src/tasks/schema.ts";

export const RECORDER_SITE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "recorder-site");
export const RECORDER_SCRIPT = path.join(RECORDER_SITE, "actions.yaml");

export function makeScratchDir(label: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `iwr-recorder-${label}-`));
}

/** The fixture's script as an object, to derive broken variants from. */
export function fixtureScript(): Record<string, unknown> & { actions: Record<string, unknown>[] } {
  return {
    source_website: "fixture:recorder-site",
    classification: { interaction_complexity: "L2", visual_complexity: "V1", domain: "testing", sub_domain: "recorder" },
    resolution: "800x600",
    actions: [
      { type: "Click", locator: "#toggle", description: "the green 'Show details' button", assertion: "A panel appears", visual: true },
      { type: "Type", locator: "#name", description: "the name field", text: "Ada", assertion: "", visual: false },
      { type: "Press", key: "Enter", description: "confirm the name", assertion: "A greeting appears", visual: true },
    ],
  };
}

export function writeScript(dir: string, name: string, script: unknown): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, stringify(script));
  return file;
}

/** Every path under `dir`, relative and sorted (hidden ones included). */
export function listTree(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (current: string): void => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      out.push(path.relative(dir, full));
      if (entry.isDirectory()) walk(full);
    }
  };
  walk(dir);
  return out.sort();
}

/** The small logo every one-page site of the tests shows (a task needs an image), in one colour. */
export function logoPng(colour: string): Promise<Buffer> {
  return sharp({ create: { width: 32, height: 32, channels: 3, background: colour } })
    .png()
    .toBuffer();
}

export interface OnePageSite {
  /** index.html; it shows img/logo.png. */
  readonly html: string;
  readonly logoColour: string;
  readonly script: unknown;
  readonly pacing: Partial<RecorderPacing>;
  readonly clock?: "auto" | PageClock;
}

/** Writes a one-page site and its script into a fresh folder under `scratch` and records it as task 1 of a set of its own. */
export async function recordOnePageSite(scratch: string, label: string, site: OnePageSite): Promise<{ recorded: RecordedTask; task: Task }> {
  const caseDir = fs.mkdtempSync(path.join(scratch, `${label}-`));
  const siteDir = path.join(caseDir, "site");
  fs.mkdirSync(path.join(siteDir, "img"), { recursive: true });
  fs.writeFileSync(path.join(siteDir, "index.html"), site.html);
  fs.writeFileSync(path.join(siteDir, "img", "logo.png"), await logoPng(site.logoColour));
  const jsonl = path.join(caseDir, "set.jsonl");
  const script = writeScript(caseDir, "actions.yaml", site.script);
  const recorded = await recordTask({ script, site: siteDir, data: jsonl, pacing: site.pacing, ...(site.clock ? { clock: site.clock } : {}) });
  return { recorded, task: (await loadTasks(jsonl))[0]! };
}
