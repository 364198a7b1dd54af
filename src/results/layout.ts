/**
 * The results folder's layout, in one place. It follows the benchmark's (docs/protocol.md
 * §2, §3.7) and adds our records beside each page:
 *
 *   <result>/<id>/<model-dir>/index.html        the candidate page
 *   <result>/<id>/<model-dir>/generation.json   how it was made (request hash, reply, usage)
 *   <result>/<id>/<model-dir>/eval.json         what the evaluator found (keyed by what it scored)
 *   <result>/<id>/<model-dir>/eval.<mode>.json  the same under another pairing mode, when one run scored several
 *   <result>/<id>/<model-dir>/eval-error.json   why an evaluation could not finish
 *   <result>/<id>/<model-dir>/eval.stale.json   an eval.json whose page or settings changed since
 *   <result>/<id>/<model-dir>/replay.json       every step, grounding and judge exchange
 *   <result>/<id>/<model-dir>/trace.zip         Playwright trace of the replay
 *   <result>/<id>/<model-dir>/evalpoints/<i>.png
 *   <result>/<id>/<model-dir>/selfcheck.json    the self-check of the page (from the task's inputs only)
 *   <result>/<id>/<model-dir>/self-check/<i>.png its screenshots
 *   <result>/<id>/<model-dir>/mutant.json       how a mutant page was made
 *   <result>/<id>/<model-dir>/source.json       where a page made elsewhere came from (experiments' results: arms)
 *   <result>/<id>/<model-dir>@agent/index.html  the agent's best draft, beside:
 *     agent.json                                iterations, stop reason, self-scores, usage per node, switches
 *     work/                                     the agent's work folder, all it reads and writes while it runs:
 *       iterations/<draft>/{index.html, feedback.json, selfcheck.json, self-check/*.png}
 *       store/<sha256>.<ext>                    frames, storyboard, critiques and pages, content-addressed
 *       agent.sqlite                            LangGraph checkpoints (resume)
 *     draft-scores/<draft>/{eval.json, evalpoints/, replay.json, ...}
 *                                               the evaluator on each draft, after the agent has finished
 *                                               (outside work/: the truth never sits where the agent works)
 *   <result>/<id>/<model-dir>@agent-oracle/     the agent with oracle feedback (uses the task's truth), a
 *                                               separate track: the same files, plus
 *     oracle-scores/<draft>/{eval.json, ...}    the evaluator on each draft while the agent runs, fed back to it
 *   <result>/reports/<model-dir>_metrics.md
 *
 * An experiment's run folder (`iwr run`) holds one such results folder per arm and repeat:
 *
 *   <run>/run.json                      what made the run (config hash, versions, prompt hashes, evaluator)
 *   <run>/config.yaml                   the config as given
 *   <run>/arms/<arm>/repeat-<k>/        a results folder as above; each cell's candidate folder
 *                                       (runFiles().cellDir) also holds cell.json, the cell's outcome
 *   <run>/report.json, report.md, report.html
 *
 * `<model-dir>` is modelDirName(model) and must be a safe folder name (safe-name.ts).
 * Names starting with "." inside a candidate folder are temporary (tempPathBeside) and
 * swept by later runs (sweepAbandonedTemps in src/files/atomic.ts).
 */
import path from "node:path";
import { modelFolderName, safeFolderName } from "../files/safe-name.ts";
import type { AgentFeedbackKind } from "./tracks.ts";

export { modelDirName, modelFolderName } from "../files/safe-name.ts";

export const RESULT_FILES = Object.freeze({
  page: "index.html",
  generation: "generation.json",
  eval: "eval.json",
  evalError: "eval-error.json",
  staleEval: "eval.stale.json",
  replay: "replay.json",
  trace: "trace.zip",
  evalpoints: "evalpoints",
  selfCheck: "selfcheck.json",
  selfCheckError: "selfcheck-error.json",
  selfCheckShots: "self-check",
  mutant: "mutant.json",
  agent: "agent.json",
  agentIterations: "iterations",
  agentStore: "store",
  agentCheckpoints: "agent.sqlite",
  agentWork: "work",
  draftScores: "draft-scores",
  oracleScores: "oracle-scores",
  feedback: "feedback.json",
  cell: "cell.json",
  /** A page taken from another results folder: where from, and the asset links rebased. */
  source: "source.json",
});

/** The agent's folder beside a model's single-pass folder: `<model-dir>@agent`. */
export const AGENT_FOLDER_SUFFIX = "@agent";

/** An agent with oracle feedback (the evaluator's findings: the task's truth) is a separate track with its own folder. */
const AGENT_FOLDER_SUFFIXES: Readonly<Record<AgentFeedbackKind, string>> = { "self-check": AGENT_FOLDER_SUFFIX, oracle: "@agent-oracle" };

export const REPORTS_DIR = "reports";

/** eval.json under a pairing mode other than the run's first (a calibration scores both). */
export function evalFileForMode(mode: string): string {
  return `eval.${mode}.json`;
}

/** Entries of a candidate folder that are records, not page files: never served to the page. */
export const RECORD_ENTRIES: ReadonlySet<string> = new Set([
  ...Object.values(RESULT_FILES).filter((name) => name !== RESULT_FILES.page),
  evalFileForMode("aligned"),
  evalFileForMode("official"),
  // SQLite's companions of the checkpoint database.
  `${RESULT_FILES.agentCheckpoints}-wal`,
  `${RESULT_FILES.agentCheckpoints}-shm`,
]);

/** `<result>/<id>/<model-dir>@agent/` for the drafting model's name (`@agent-oracle/` for the oracle-feedback track). */
export function agentDirFor(resultDir: string, taskId: number, model: string, source = "--model", feedback: AgentFeedbackKind = "self-check"): string {
  return path.join(resultDir, String(taskId), safeFolderName(`${modelFolderName(model, source)}${AGENT_FOLDER_SUFFIXES[feedback]}`, source));
}

/** Every file of an agent's work folder: what the graph reads and writes while it runs. */
export function agentWorkFiles(workDir: string) {
  return {
    dir: workDir,
    checkpoints: path.join(workDir, RESULT_FILES.agentCheckpoints),
    store: path.join(workDir, RESULT_FILES.agentStore),
    iterations: path.join(workDir, RESULT_FILES.agentIterations),
    /** `iterations/<draft>/`, a candidate folder of its own. */
    iteration: (draft: number) => path.join(workDir, RESULT_FILES.agentIterations, String(draft)),
  };
}

/** Every file of one agent folder (`<model-dir>@agent/`): the best page, the record, the work folder, the drafts' scores. */
export function agentFiles(dir: string) {
  const work = agentWorkFiles(path.join(dir, RESULT_FILES.agentWork));
  return {
    dir,
    page: path.join(dir, RESULT_FILES.page),
    record: path.join(dir, RESULT_FILES.agent),
    work,
    /** A draft's folder in the work folder. */
    iteration: work.iteration,
    /** Where the evaluator's records of a draft go: outside the work folder. */
    draftScores: (draft: number) => path.join(dir, RESULT_FILES.draftScores, String(draft)),
    /** The oracle-feedback track: the evaluator's records of a draft made while the agent runs, outside the work folder too. */
    oracleScores: (draft: number) => path.join(dir, RESULT_FILES.oracleScores, String(draft)),
  };
}

/** `<result>/<id>/<model-dir>/` for a model name (checked: refused with `source` named when unsafe). */
export function candidateDirFor(resultDir: string, taskId: number, model: string, source = "--model"): string {
  return path.join(resultDir, String(taskId), modelFolderName(model, source));
}

/** `<result>/<id>/<folder>/` for a folder name already decided (e.g. "reference", "mutant-no-script"). */
export function candidateDirNamed(resultDir: string, taskId: number, folder: string, source = "candidate folder"): string {
  return path.join(resultDir, String(taskId), safeFolderName(folder, source));
}

/** Every file of one candidate folder. */
export interface CandidateFiles {
  dir: string;
  page: string;
  generation: string;
  eval: string;
  evalError: string;
  staleEval: string;
  replay: string;
  trace: string;
  evalpoints: string;
  evalpoint(index: number): string;
  selfCheck: string;
  selfCheckError: string;
  selfCheckShots: string;
  mutant: string;
}

export function candidateFiles(dir: string): CandidateFiles {
  const inDir = (name: string) => path.join(dir, name);
  return {
    dir,
    page: inDir(RESULT_FILES.page),
    generation: inDir(RESULT_FILES.generation),
    eval: inDir(RESULT_FILES.eval),
    evalError: inDir(RESULT_FILES.evalError),
    staleEval: inDir(RESULT_FILES.staleEval),
    replay: inDir(RESULT_FILES.replay),
    trace: inDir(RESULT_FILES.trace),
    evalpoints: inDir(RESULT_FILES.evalpoints),
    evalpoint: (index) => path.join(dir, RESULT_FILES.evalpoints, `${index}.png`),
    selfCheck: inDir(RESULT_FILES.selfCheck),
    selfCheckError: inDir(RESULT_FILES.selfCheckError),
    selfCheckShots: inDir(RESULT_FILES.selfCheckShots),
    mutant: inDir(RESULT_FILES.mutant),
  };
}

/** `evalpoints/<i>.png` relative to the candidate folder, as records cite it. */
export function evalpointRelativePath(index: number): string {
  return `${RESULT_FILES.evalpoints}/${index}.png`;
}

/** `<result>/reports/<file-stem>_metrics.md`. */
export function metricsReportPath(resultDir: string, fileStem: string): string {
  return path.join(resultDir, REPORTS_DIR, `${safeFolderName(fileStem, "report name")}_metrics.md`);
}

/** The candidate folder of an experiment cell, by arm kind (single-pass: the model's folder, agent: `<model-dir>@agent`, ...). */
export type CellFolder = { kind: "model"; model: string } | { kind: "agent"; model: string; feedback?: AgentFeedbackKind } | { kind: "named"; folder: string };

/** Every path of an experiment's run folder. */
/** The lock a command holds in a run folder while it works on it (src/files/folder-lock.ts). */
export const RUN_LOCK = "run.lock";

/** The lock a command holds in a results folder while it makes or scores one model's pages: `<result>/<model-dir>.lock`. */
export function resultsLockName(modelDir: string): string {
  return `${modelDir}.lock`;
}

export function runFiles(runDir: string) {
  const inRun = (name: string) => path.join(runDir, name);
  const armResults = (arm: string, repeat: number) => path.join(runDir, "arms", safeFolderName(arm, "arm name"), `repeat-${repeat}`);
  return {
    dir: runDir,
    record: inRun("run.json"),
    config: inRun("config.yaml"),
    reportJson: inRun("report.json"),
    reportMd: inRun("report.md"),
    reportHtml: inRun("report.html"),
    /** `<run>/arms/<arm>/repeat-<k>/`: a results folder of the benchmark's layout. */
    armResults,
    cellDir(arm: string, repeat: number, taskId: number, folder: CellFolder): string {
      const results = armResults(arm, repeat);
      if (folder.kind === "model") return candidateDirFor(results, taskId, folder.model, `arm ${arm}: model`);
      if (folder.kind === "agent") return agentDirFor(results, taskId, folder.model, `arm ${arm}: model`, folder.feedback);
      return candidateDirNamed(results, taskId, folder.folder);
    },
    /** `cell.json` in a cell's candidate folder. */
    cellRecord: (cellDir: string) => path.join(cellDir, RESULT_FILES.cell),
  };
}
export type RunFiles = ReturnType<typeof runFiles>;
