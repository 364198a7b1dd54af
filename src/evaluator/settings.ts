/**
 * Every setting of the evaluator's scoring half (docs/protocol.md §3.5–§3.6) in one
 * object. Timings and weights come from the shared PROTOCOL object; what only the
 * evaluator needs (metric engines, the judge's score pattern, pairing modes, edge-case
 * choices) lives here, named after what it stands for.
 */
import { METRIC_SETTINGS } from "../metrics/settings.ts";
import { PROTOCOL } from "../protocol.ts";

export const PAIRING_MODES = ["official", "aligned"] as const;
export type PairingMode = (typeof PAIRING_MODES)[number];

export const EVALUATOR_SETTINGS = Object.freeze({
  protocol: PROTOCOL,

  /** §3.5 OCR, DINO and DINO's labelled fallback: the shared engines' settings (src/metrics/settings.ts). */
  ocr: METRIC_SETTINGS.ocr,
  dino: METRIC_SETTINGS.dino,
  visualFallback: METRIC_SETTINGS.visualFallback,

  /** §3.5 MLLM judge. */
  mllm: Object.freeze({
    promptName: "judge-visual",
    /** The benchmark's parse: the first "Score: … N/100", case-insensitive; unparsable → 0. */
    scorePattern: /Score:.*?(\d{1,3})\/100/i,
    unparsableScore: 0,
    minScore: 0,
    maxScore: 100,
    /** The judge sees the reference (checkpoint) first, then the candidate screenshot. */
    imageOrder: "reference-then-candidate",
    /**
     * Offline stand-in when no judge model is configured, labelled in every result:
     * round(100 · (OCR similarity + visual similarity) / 2) for the same pair. It makes
     * HFS track LFS, so it is a placeholder for plumbing and calibration, not a judge.
     */
    offlineProxyName: "offline-proxy",
  }),

  pairing: Object.freeze({
    modes: PAIRING_MODES,
    /** The published harness's pairing (comparable with the leaderboard). */
    defaultMode: "official" as PairingMode,
  }),

  aggregation: Object.freeze({
    /**
     * Mean of an empty list (no evalpoint could be scored, e.g. the page never loaded).
     * numpy gives nan (and a warning); a nan would poison the benchmark mean, so we use 0.
     */
    emptyMean: 0,
    /** IFS when a task declares no steps (only possible in a foreign eval.json): 0, never a division by zero. */
    ifsWithoutSteps: 0,
  }),

  report: Object.freeze({
    /** Percentages printed with this many decimals. */
    decimals: 2,
    avgRowLabel: "avg",
  }),
});
