/**
 * An agent cell's iterations for the view: every draft in the order the agent asked for
 * them (round, origin, the draft it revised), its self-score, and the evaluator's Final of
 * it scored after the agent finished (cell.json's iterations, draft-scores/<draft>/eval.json);
 * the critiques' defects; and the diff between two drafts' pages. Read from agent.json,
 * cell.json and the agent's folder; nothing is written.
 */
import fs from "node:fs";
import path from "node:path";
import { createTwoFilesPatch } from "diff";
import { agentFiles, RESULT_FILES } from "../results/layout.ts";
import { readLooseJson } from "./read-json.ts";
import type { IndexedCell } from "./run-index.ts";

export interface DraftView {
  id: number;
  round: number;
  origin?: string;
  parent?: number;
  selfScore?: number;
  behaviour?: number;
  appearance?: number;
  /** The evaluator's scores of the draft (after the fact; never shown to the agent). */
  final?: number;
  ifs?: number;
  scoreError?: string;
  findings?: number;
  /** The draft's own self-check findings (its feedback.json), most costly first. */
  topFindings: string[];
  edits?: { proposed: number; applied: number; failed: string[] };
  error?: string;
  hasPage: boolean;
  best: boolean;
  /** The draft's screenshot before any action, as the evaluator took it (when it was scored). */
  thumbnail?: string;
  costUsd?: number;
}

export interface AgentTimeline {
  status?: string;
  track?: string;
  stopReason?: string;
  bestDraft?: number;
  bestSelfScore?: number;
  selfScoreByRound: number[];
  settings: Record<string, unknown>;
  drafts: DraftView[];
  /** The critiques in the agent's store, the latest (agent.json names its round) last. */
  critiques: Array<{ round?: number; defects: Array<{ where?: string; problem: string; change: string }>; latest: boolean }>;
  critiqueError?: string;
  usage?: { calls?: number; inputTokens?: number; outputTokens?: number; costUsd?: number };
  durationMs?: number;
  error?: string;
}

interface AgentFile {
  status?: string;
  track?: string;
  settings?: Record<string, unknown>;
  stopReason?: string;
  bestDraft?: number;
  bestSelfScore?: number;
  selfScoreByRound?: number[];
  drafts?: Array<{
    id: number;
    round: number;
    parent?: number;
    origin?: string;
    page?: { sha256: string };
    selfScore?: number;
    behaviour?: number;
    appearance?: number;
    findings?: number;
    edits?: { proposed: number; applied: number; failed: string[] };
    error?: { code: string; message: string };
    usage?: { costUsd?: number };
  }>;
  critique?: { round: number; defects?: { sha256: string }; defectCount?: number; error?: { code: string; message: string } };
  usage?: { calls?: number; inputTokens?: number; outputTokens?: number; costUsd?: number };
  durationMs?: number;
  error?: { code: string; message: string };
}

interface Defects {
  defects?: Array<{ where?: string; problem: string; change: string }>;
}

const SHA256 = /^[0-9a-f]{64}$/;

export function agentTimeline(cell: IndexedCell, problems: string[]): AgentTimeline {
  const files = agentFiles(cell.scores.dir);
  const agent = readLooseJson<AgentFile>(files.record, problems) ?? {};
  const scored = new Map(cell.record.iterations.map((entry) => [entry.draft, entry]));
  const drafts: DraftView[] = (agent.drafts ?? []).map((draft) => {
    const scores = readLooseJson<{ scores?: { final: number; ifs: number } }>(path.join(files.draftScores(draft.id), RESULT_FILES.eval), problems);
    const fromCell = scored.get(draft.id);
    const feedback = readLooseJson<{ findings?: Array<{ message: string }> }>(path.join(files.iteration(draft.id), RESULT_FILES.feedback), problems);
    const final = scores?.scores?.final ?? fromCell?.final;
    const firstShot = path.join(files.draftScores(draft.id), RESULT_FILES.evalpoints, "0.png");
    return {
      id: draft.id,
      round: draft.round,
      ...(draft.origin ? { origin: draft.origin } : {}),
      ...(draft.parent !== undefined ? { parent: draft.parent } : {}),
      ...(draft.selfScore !== undefined ? { selfScore: draft.selfScore } : {}),
      ...(draft.behaviour !== undefined ? { behaviour: draft.behaviour } : {}),
      ...(draft.appearance !== undefined ? { appearance: draft.appearance } : {}),
      ...(final !== undefined ? { final } : {}),
      ...(scores?.scores ? { ifs: scores.scores.ifs } : {}),
      ...(fromCell?.error ? { scoreError: `${fromCell.error.code}: ${fromCell.error.message}` } : {}),
      ...(draft.findings !== undefined ? { findings: draft.findings } : {}),
      topFindings: (feedback?.findings ?? []).slice(0, 3).map((finding) => finding.message),
      ...(draft.edits ? { edits: draft.edits } : {}),
      ...(draft.error ? { error: `${draft.error.code}: ${draft.error.message}` } : {}),
      hasPage: fs.existsSync(path.join(files.iteration(draft.id), RESULT_FILES.page)),
      best: agent.bestDraft === draft.id,
      ...(fs.existsSync(firstShot) ? { thumbnail: `draft/${draft.id}/evalpoint/0` } : {}),
      ...(draft.usage?.costUsd !== undefined ? { costUsd: draft.usage.costUsd } : {}),
    };
  });
  return {
    ...(agent.status ? { status: agent.status } : {}),
    ...(agent.track ? { track: agent.track } : {}),
    ...(agent.stopReason ? { stopReason: agent.stopReason } : {}),
    ...(agent.bestDraft !== undefined ? { bestDraft: agent.bestDraft } : {}),
    ...(agent.bestSelfScore !== undefined ? { bestSelfScore: agent.bestSelfScore } : {}),
    selfScoreByRound: agent.selfScoreByRound ?? [],
    settings: agent.settings ?? {},
    drafts,
    critiques: critiques(files.work.store, agent, problems),
    ...(agent.critique?.error ? { critiqueError: `${agent.critique.error.code}: ${agent.critique.error.message}` } : {}),
    ...(agent.usage ? { usage: agent.usage } : {}),
    ...(agent.durationMs !== undefined ? { durationMs: agent.durationMs } : {}),
    ...(agent.error ? { error: `${agent.error.code}: ${agent.error.message}` } : {}),
  };
}

/**
 * The critiques' defects. agent.json names the latest critique's file (by hash, read from
 * this cell's own store); earlier rounds' critiques are the other defect lists in the store,
 * oldest first by the time they were written (the store is content-addressed: a critique
 * repeated word for word is one file).
 */
function critiques(storeDir: string, agent: AgentFile, problems: string[]): AgentTimeline["critiques"] {
  const latest = agent.critique?.defects?.sha256;
  let names: string[] = [];
  try {
    names = fs.readdirSync(storeDir).filter((name) => name.endsWith(".json") && SHA256.test(name.slice(0, -5)));
  } catch {
    return [];
  }
  const found: Array<{ sha: string; mtimeMs: number; defects: NonNullable<Defects["defects"]> }> = [];
  for (const name of names) {
    const file = path.join(storeDir, name);
    const parsed = readLooseJson<Defects>(file, problems);
    if (!parsed || !Array.isArray(parsed.defects)) continue;
    found.push({ sha: name.slice(0, -5), mtimeMs: fs.statSync(file).mtimeMs, defects: parsed.defects });
  }
  found.sort((a, b) => Number(a.sha === latest) - Number(b.sha === latest) || a.mtimeMs - b.mtimeMs);
  return found.map((entry) => ({
    ...(entry.sha === latest && agent.critique ? { round: agent.critique.round } : {}),
    defects: entry.defects,
    latest: entry.sha === latest,
  }));
}

/** The largest diff the view sends; a longer one is cut with a note. */
const MAX_DIFF_CHARS = 400_000;

/** A unified diff between two drafts' pages (`work/iterations/<draft>/index.html`). */
export function draftDiff(cell: IndexedCell, from: number, to: number): string {
  const files = agentFiles(cell.scores.dir);
  const read = (draft: number) => {
    const file = path.join(files.iteration(draft), RESULT_FILES.page);
    return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
  };
  const patch = createTwoFilesPatch(`draft ${from}/index.html`, `draft ${to}/index.html`, read(from), read(to), "", "", { context: 3 });
  return patch.length > MAX_DIFF_CHARS ? `${patch.slice(0, MAX_DIFF_CHARS)}\n… (diff cut at ${MAX_DIFF_CHARS} characters)\n` : patch;
}
