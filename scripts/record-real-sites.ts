/**
 * `npm run tasks:real -- --sites <dir> --data <out.jsonl>` and `npm run tasks:natural --
 * --mirror <dir>`: records a corpus of public sites nobody on this project wrote, one task
 * per site, ids 1, 2, ... in the list's order. The sites' own files stay out of this
 * repository; the corpus lists each site by repository, commit and folder:
 *
 *   real     tasks/real-sites/sites.yaml: four open-source sites (issue #15)
 *   natural  tasks/natural/SOURCES.tsv: eight small public pages whose action scripts were
 *            written by someone who never saw our judge's rules (issue #30); each may carry
 *            a one-line patch (patches/<name>.patch) and a picture it shows (additions/<name>/)
 *
 * A site comes from a checkout (`--sites <dir>`: `<dir>/<folder>` is the repository at its
 * commit) or from a bare mirror (`--mirror <dir>`: `<dir>/<owner>+<name>/repo`, as `git
 * clone --mirror` or a fetched snapshot gives it); it is copied to a scratch folder, patched
 * there, and recorded. Nothing from these repositories runs but their pages, in the
 * recorder's sandboxed browser.
 *
 * Each recorded task's recording.json says what the recorder had to capture. Follow with
 * `npm run calibrate -- --data <out.jsonl> --no-ladder` for the calibration table.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { exitWithUsageError, parseScriptArgs } from "./cli-args.ts";

const TASKS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "tasks");
const CORPORA = { real: path.join(TASKS_DIR, "real-sites"), natural: path.join(TASKS_DIR, "natural") } as const;
type Corpus = keyof typeof CORPORA;

const spec = {
  name: "tasks:real",
  command: "npm run tasks:real --",
  summary: "Records a corpus of public sites (tasks/real-sites, or tasks/natural with --corpus natural) into a task file, replacing tasks with the same ids.",
  options: {
    corpus: {
      type: "string",
      value: "<real|natural>",
      description: "which corpus: real (tasks/real-sites/sites.yaml) or natural (tasks/natural/SOURCES.tsv)",
      default: "real",
      parse: (text: string): Corpus => {
        if (text !== "real" && text !== "natural") throw new Error(`expected real or natural, got '${text}'`);
        return text;
      },
    },
    sites: {
      type: "string",
      value: "<dir>",
      description: "folder holding a checkout of each site's repository, as <dir>/<folder> (see the corpus's SOURCES.md)",
    },
    mirror: {
      type: "string",
      value: "<dir>",
      description: "folder holding a bare mirror of each repository, as <dir>/<owner>+<name>/repo (instead of --sites)",
    },
    data: {
      type: "string",
      value: "<out.jsonl>",
      description: "task file to write; the task folders go beside it (default runs/<corpus>/<corpus>.jsonl)",
    },
    only: { type: "string", value: "<name,...>", description: "only these scripts, by file name without .yaml (default: every site)" },
  },
} as const;

const { values: chosen } = parseScriptArgs(spec);
if (!chosen.sites === !chosen.mirror) exitWithUsageError(spec, "give one of --sites (checkouts) or --mirror (bare mirrors)");
const corpus = chosen.corpus as Corpus;
const corpusDir = CORPORA[corpus];
const dataPath = chosen.data ?? path.join("runs", corpus === "real" ? "real-sites" : "natural", `${corpus === "real" ? "real-sites" : "natural"}.jsonl`);

const SiteSchema = z.strictObject({
  script: z.string().min(1),
  repository: z.url(),
  commit: z.string().regex(/^[0-9a-f]{40}$/),
  licence: z.string().min(1),
  folder: z.string().min(1),
  path: z.string().min(1),
  /** A patch applied inside the site's folder (`diff -U0`, paths a/ and b/). */
  patch: z.string().min(1).optional(),
  /** A folder whose files are copied into the site's folder. */
  additions: z.string().min(1).optional(),
});
type Site = z.infer<typeof SiteSchema>;
const SiteListSchema = z.strictObject({ sites: z.array(SiteSchema) });

const [{ configureLogger }, { readYamlSource }, { recordTask }, { closeSharedBrowser }, { errorMessage }] = await Promise.all([
  import("../src/log/logger.ts"),
  import("../src/config/yaml-source.ts"),
  import("../src/recorder/record-task.ts"),
  import("../src/browser/launch.ts"),
  import("../src/errors.ts"),
]);

/** The natural corpus's list as its authors wrote it: a tab-separated table, one row per site; patches and pictures by name. */
function naturalSites(): Site[] {
  const [header, ...rows] = fs.readFileSync(path.join(corpusDir, "SOURCES.tsv"), "utf8").split("\n").filter(Boolean);
  const columns = (header ?? "").split("\t");
  const at = (cells: string[], name: string) => cells[columns.indexOf(name)] ?? "";
  return rows.map((row, index) => {
    const cells = row.split("\t");
    const name = at(cells, "name");
    const repository = at(cells, "repository");
    const site = {
      script: `scripts/${name}.yaml`,
      repository: `https://github.com/${repository}`,
      commit: at(cells, "commit"),
      licence: at(cells, "licence"),
      folder: repository.split("/")[1] ?? repository,
      path: at(cells, "path"),
      ...(fs.existsSync(path.join(corpusDir, "patches", `${name}.patch`)) ? { patch: `patches/${name}.patch` } : {}),
      ...(fs.existsSync(path.join(corpusDir, "additions", name)) ? { additions: `additions/${name}` } : {}),
    };
    const parsed = SiteSchema.safeParse(site);
    if (!parsed.success) throw new Error(`${path.join(corpusDir, "SOURCES.tsv")}:${index + 2}: ${parsed.error.issues[0]?.message ?? "invalid row"}`);
    return parsed.data;
  });
}

function sitesOf(): Site[] {
  if (corpus === "natural") return naturalSites();
  return readYamlSource(path.join(corpusDir, "sites.yaml"), { code: "CONFIG_INVALID", what: "site list", expected: "a list of sites" }).validate(SiteListSchema)
    .sites;
}

/** The site's files in a scratch folder: exported from the mirror, or copied from the checkout; patched; pictures added. */
function buildSite(site: Site, scratch: string): string {
  const dir = path.join(scratch, site.script.replace(/^.*\//, "").replace(/\.ya?ml$/, ""));
  fs.mkdirSync(dir, { recursive: true });
  if (chosen.mirror) {
    const owner = new URL(site.repository).pathname.replace(/^\/|\.git$/g, "");
    const gitDir = path.resolve(chosen.mirror, owner.replace("/", "+"), "repo");
    if (!fs.existsSync(gitDir)) throw new Error(`no mirror of ${site.repository} at ${gitDir}`);
    const archive = execFileSync("git", ["--git-dir", gitDir, "archive", "--format=tar", `${site.commit}:${site.path}`], { maxBuffer: 512 * 1024 * 1024 });
    execFileSync("tar", ["-x", "-C", dir], { input: archive });
  } else {
    const checkout = path.resolve(chosen.sites!, site.folder, site.path);
    if (!fs.existsSync(path.join(checkout, "index.html"))) {
      throw new Error(`no index.html in ${checkout}: check out ${site.repository} at ${site.commit} to ${path.join(chosen.sites!, site.folder)}`);
    }
    fs.cpSync(checkout, dir, { recursive: true });
  }
  // Applied from inside the site's folder (a scratch folder outside any repository): git apply works there as patch does.
  if (site.patch) execFileSync("git", ["apply", "--unidiff-zero", "-p1", path.join(corpusDir, site.patch)], { cwd: dir });
  if (site.additions) fs.cpSync(path.join(corpusDir, site.additions), dir, { recursive: true });
  if (!fs.existsSync(path.join(dir, "index.html"))) throw new Error(`no index.html in ${site.repository} at ${site.commit}:${site.path}`);
  return dir;
}

async function main(): Promise<number> {
  configureLogger({ level: "warn" });
  const list = sitesOf();
  const only = chosen.only ? new Set(chosen.only.split(",").map((name) => name.trim().replace(/\.ya?ml$/, ""))) : undefined;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), `iwr-${corpus}-sites-`));
  let failures = 0;
  try {
    for (const [index, site] of list.entries()) {
      const name = path.basename(site.script).replace(/\.ya?ml$/, "");
      if (only && !only.has(name)) continue;
      try {
        const siteDir = buildSite(site, scratch);
        const task = await recordTask({ script: path.join(corpusDir, site.script), site: siteDir, data: dataPath, id: index + 1, force: true });
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
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return failures === 0 ? 0 : 1;
}

process.exitCode = await main().catch((error: unknown) => {
  console.error(`${spec.name}: ${errorMessage(error)}`);
  return 1;
});
