/**
 * Helpers for the recorder's tests: a scratch folder, action scripts written from
 * objects, and a listing of a folder to prove nothing was left behind.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";

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
