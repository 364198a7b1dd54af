/**
 * Loads the bundled suite's action scripts (tasks/scripts/*.yaml) for the sites
 * tests, through the recorder's own loader so the tests and `npm run tasks:build`
 * agree on what a valid script is.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type ActionScript, loadActionScript } from "../../src/recorder/script-schema.ts";

export type { ActionScript, ScriptAction } from "../../src/recorder/script-schema.ts";

export const TASKS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "tasks");
export const SCRIPTS_DIR = path.join(TASKS_DIR, "scripts");
export const SITES_DIR = path.join(TASKS_DIR, "sites");

export interface LoadedScript {
  /** Script name without extension, e.g. "shop". */
  name: string;
  file: string;
  /** Folder of the site the script drives. */
  siteDir: string;
  script: ActionScript;
}

export function loadSuiteScripts(): LoadedScript[] {
  return fs
    .readdirSync(SCRIPTS_DIR)
    .filter((name) => name.endsWith(".yaml"))
    .sort()
    .map((name) => {
      const loaded = loadActionScript(path.join(SCRIPTS_DIR, name));
      if (!loaded.siteDir) throw new Error(`${name}: the bundled scripts must name their site`);
      return { name: name.replace(/\.yaml$/, ""), file: loaded.file, siteDir: loaded.siteDir, script: loaded.script };
    });
}
