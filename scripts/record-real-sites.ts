/**
 * `npm run tasks:real -- --sites <dir> --data <out.jsonl>`: records the real-site corpus
 * (tasks/real-sites/sites.yaml) from local copies of the sites, one task per entry, ids
 * 1, 2, ... in the list's order. The sites' own files stay out of this repository; a
 * copy is `<dir>/<folder>`, a checkout of the entry's repository at its commit.
 *
 * Each recorded task's recording.json says what the recorder had to capture. Follow
 * with `npm run calibrate -- --data <out.jsonl> --no-ladder` for the calibration table.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { exitWithUsageError, parseScriptArgs } from "./cli-args.ts";

const REAL_SITES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "tasks", "real-sites");

const spec = {
  name: "tasks:real",
  command: "npm run tasks:real --",
  summary: "Records the real-site corpus (tasks/real-sites/sites.yaml) from local copies of the sites into a task file, replacing tasks with the same ids.",
  options: {
    sites: {
      type: "string",
      value: "<dir>",
      description: "folder holding a copy of each site's repository, as <dir>/<folder> (see tasks/real-sites/SOURCES.md)",
    },
    data: {
      type: "string",
      value: "<out.jsonl>",
      description: "task file to write; the task folders go beside it",
      default: "runs/real-sites/real-sites.jsonl",
    },
    only: { type: "string", value: "<name,...>", description: "only these scripts, by file name without .yaml (default: every site)" },
  },
} as const;

const { values: chosen } = parseScriptArgs(spec);
if (!chosen.sites) exitWithUsageError(spec, "--sites is required: the folder holding the sites' copies");
const sitesRoot = chosen.sites;

const SiteListSchema = z.strictObject({
  sites: z.array(
    z.strictObject({
      script: z.string().min(1),
      repository: z.url(),
      commit: z.string().regex(/^[0-9a-f]{40}$/),
      licence: z.string().min(1),
      folder: z.string().min(1),
      path: z.string().min(1),
    }),
  ),
});

const [{ configureLogger }, { readYamlSource }, { recordTask }, { closeSharedBrowser }, { errorMessage }] = await Promise.all([
  import("../src/log/logger.ts"),
  import("../src/config/yaml-source.ts"),
  import("../src/recorder/record-task.ts"),
  import("../src/browser/launch.ts"),
  import("../src/errors.ts"),
]);

async function main(): Promise<number> {
  configureLogger({ level: "warn" });
  const list = readYamlSource(path.join(REAL_SITES_DIR, "sites.yaml"), { code: "CONFIG_INVALID", what: "site list", expected: "a list of sites" }).validate(
    SiteListSchema,
  );
  const only = chosen.only ? new Set(chosen.only.split(",").map((name) => name.trim().replace(/\.ya?ml$/, ""))) : undefined;
  let failures = 0;
  try {
    for (const [index, site] of list.sites.entries()) {
      const name = site.script.replace(/\.ya?ml$/, "");
      if (only && !only.has(name)) continue;
      const siteDir = path.resolve(sitesRoot, site.folder, site.path);
      if (!fs.existsSync(path.join(siteDir, "index.html"))) {
        console.error(`${name}: no index.html in ${siteDir}: copy ${site.repository} at ${site.commit} to ${path.join(sitesRoot, site.folder)}`);
        failures += 1;
        continue;
      }
      try {
        const task = await recordTask({ script: path.join(REAL_SITES_DIR, site.script), site: siteDir, data: chosen.data, id: index + 1, force: true });
        const kinds = new Map<string, number>();
        for (const file of task.captured) kinds.set(file.kind, (kinds.get(file.kind) ?? 0) + 1);
        console.log(
          `task ${task.id} ${name}: ${task.captured.length} site files kept (${[...kinds].map(([kind, count]) => `${count} ${kind}`).join(", ") || "none"}), ` +
            `${task.assets.length} assets shown, ${task.notShown.length} media not shown, ${task.warnings.length} warning(s), ` +
            `${(task.timings.totalMs / 1000).toFixed(1)} s`,
        );
        for (const warning of task.warnings) console.log(`  warning: ${warning}`);
      } catch (error) {
        console.error(`${name}: ${errorMessage(error)}`);
        failures += 1;
      }
    }
  } finally {
    await closeSharedBrowser();
  }
  return failures === 0 ? 0 : 1;
}

process.exitCode = await main().catch((error: unknown) => {
  console.error(`tasks:real: ${errorMessage(error)}`);
  return 1;
});
