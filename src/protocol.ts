/**
 * Every constant of the benchmark's protocol (docs/protocol.md §2–§3) in one place.
 * The recorder settles checkpoints with the same timings the evaluator replays with,
 * so both import from here; nothing else hard-codes a wait.
 */
export const PROTOCOL = Object.freeze({
  /** §3.1: wait after opening the page, before evalpoint 0. */
  initialSettleMs: 1000,
  /** §3.2: wait after each executed action, before its evalpoint. */
  actionSettleMs: 500,
  /** §3.2: limit for executing one action. */
  actionTimeoutMs: 30_000,
  /** §3.2 Scroll: fraction of the viewport height scrolled down. */
  scrollViewportFraction: 0.5,
  /** §3.2 Scroll: succeeds only if scrollY changed by more than this. */
  scrollMinDeltaPx: 5,
  /** §2: frames sampled per second of video. */
  framesPerSecond: 1,
  /** §2: longer videos get exactly this many frames, evenly spaced. */
  maxVideoFrames: 64,
  /** §2: images sent in total (sheets first, frames fill the rest). */
  maxImages: 70,
  /** §2: default output budget for generation. */
  maxTokens: 16_384,
  /** §3.6: weights of the final score. */
  weights: Object.freeze({ ifs: 0.7, vfs: 0.3, lfsInVfs: 0.5, hfsInVfs: 0.5 }),
  /** §3.5 MLLM rubric (points out of 100). */
  mllmRubric: Object.freeze({ layout: 10, elements: 15, contentAndText: 40, style: 15, overall: 20 }),
});

/**
 * When a page is "at rest" (issue #30): the recorder takes every checkpoint and every
 * reference state at rest, and the corrected profile's replay takes its screenshots the
 * same way (src/browser/settle.ts). At rest means: the profile's fixed wait has passed
 * (so a screenshot is never taken earlier than with fixed waits), no finite animation or
 * transition is running (View Transitions included), web fonts and the images in view
 * have loaded, no request the page's look depends on is in flight, and neither the layout
 * nor the screen changed for a quiet window. The wait is bounded: a page that never
 * settles (a canvas animating forever, an endless spinner) is captured at the bound, and
 * the record of the wait says so and what was still going on.
 */
export const AT_REST = Object.freeze({
  /** The layout must stay put this long, and the screen look the same at both ends of it. */
  quietWindowMs: 300,
  /** Pause between two readings of the page's activity and layout while waiting (the screen is looked at less often: src/browser/settle.ts). */
  pollIntervalMs: 100,
  /** The longest wait after opening the page (measured from the load event). */
  initialBoundMs: 5000,
  /** The longest wait after an action. */
  actionBoundMs: 3000,
});

/**
 * The largest viewport side we open a page at (Chromium's own limits and memory make
 * anything larger impractical). One limit, read by the task validator and the page
 * host, so a task that validates is a task the evaluator can open.
 */
export const MAX_VIEWPORT_SIDE = 8192;

/**
 * The two named protocol profiles (issue #14). `official` reproduces the published
 * harness, quirks included, so our numbers sit beside the leaderboard; `corrected`
 * keeps the choices we think are better science. Every eval.json, generation.json and
 * report names the profile it was made under, and no report averages two profiles.
 */
export const PROTOCOL_PROFILES = ["official", "corrected"] as const;
export type ProtocolProfile = (typeof PROTOCOL_PROFILES)[number];

/** What `iwr generate` and `iwr evaluate` use unless told otherwise: the benchmark as published. */
export const DEFAULT_CLI_PROFILE: ProtocolProfile = "official";
/** What an experiment config uses unless its `evaluator.protocol` says otherwise. */
export const DEFAULT_EXPERIMENT_PROFILE: ProtocolProfile = "corrected";

export interface ProfileRules {
  /** Which evalpoint meets step_<k>: the harness's (state before the flagged action) or aligned (after it). */
  pairing: "official" | "aligned";
  /**
   * Which flagged actions enter the visual list.
   * `harness`: stop before the action whose assertion said No; a flagged action i enters
   *   while i ≤ the executed count, so the failed action's entry is included.
   * `through-no`: actions that executed, up to and including the one whose assertion said No.
   */
  visualBoundary: "harness" | "through-no";
  /** A judge that failed: `error` is recorded as "Error" and does not cut success_step; `no` counts as No. */
  judgeFailure: "error" | "no";
  /** Judge attempts per assertion (the harness asks once; HTTP-level retries are the client's either way). */
  judgeAttempts: number;
  /** Reply parse: the harness's (JSON, else the substring "Yes" before "No") or ours (JSON, fenced, embedded, whole words). */
  judgeParse: "harness" | "iwr";
  /**
   * An assertion of only whitespace: `judged` as the harness does (any non-empty string is
   * sent to the judge), or `skipped` like an empty one (it states nothing to check).
   */
  blankAssertion: "judged" | "skipped";
  /** Score visual-list entries that the success_step + 1 cut drops (the harness scores, then truncates). */
  scoreCutEntries: boolean;
  /**
   * The OCR term of a pair where neither picture shows any text: the text similarity of two
   * empty readings (1, as the harness computes it: an empty page scores full text marks
   * against a page of photos), or the pair's visual similarity in its place (the text term
   * has nothing to say there).
   */
  textlessPairs: "text-similarity" | "visual-similarity";
  /** The benchmark mean: over tasks that have an index.html, or over every task (a missing page scores 0). */
  averageOver: "tasks-with-page" | "all-tasks";
  /** Frames for a video of d seconds at 1 fps: int(d) (the harness) or ceil(d) (the last partial second too). */
  frameCount: "floor" | "ceil";
  /** Reply post-processing: the fence pattern needs a closing fence (else the whole reply is kept), or an open fence is read to the end. */
  replyFence: "closed-only" | "open-allowed";
  /** An empty or prose reply: written as index.html and evaluated (the harness), or the task fails. */
  unusableReply: "write" | "fail";
  /** Sheets alone over the image cap: all sheets and no frames (the harness), or the task fails. */
  sheetsOverCap: "sheets-only" | "fail";
  /** Frames are sent as JPEG (the harness) or PNG. */
  frameFormat: "jpeg" | "png";
  /**
   * When a replay screenshot is taken: after the fixed waits of `timings` (the harness), or once the page is at rest
   * (AT_REST: the fixed wait, then until nothing moves, bounded), the rule the recorder takes its checkpoints by.
   */
  screenshotSettle: "fixed-waits" | "at-rest";
  /** Replay timings in ms (the harness's browser layer adds 0.2 s inside each screenshot, Scroll a further 1 s). */
  timings: Readonly<{ initialSettleMs: number; actionSettleMs: number; screenshotDelayMs: number; scrollExtraSettleMs: number }>;
  /** The metrics report: the harness's title, column order and file name, or ours. */
  reportStyle: "harness" | "iwr";
  /** A task line without a resolution: the harness's fallback (metadata.json, then 1920x1080), or refused. */
  missingResolution: "harness" | "refuse";
  /**
   * Whether the grounding model is given a Type action's parameters.text: `withheld` as
   * the harness (its lines carry none; the model reads the text from the description and
   * answers index,"text"), or `given` when the line has it. The offline grounding, which
   * has no harness counterpart, uses the line's text when present either way.
   */
  typeTextToModel: "withheld" | "given";
  /**
   * How actions execute: the harness's looser semantics (src/browser/harness-actions.ts, its 30 s limit covering grounding)
   * or ours (src/browser/actions.ts).
   */
  actionStyle: "harness" | "iwr";
  /** Chromium's scrollbars: visible as in the harness's browser, or hidden (our recorder's checkpoints are taken without them). */
  scrollbars: "visible" | "hidden";
  /**
   * Model grounding: `harness` — the reply must be bare digits (Type: index,"text"); -1
   * or prose goes to the vision fallback, sent without a temperature; an index outside
   * the list fails the step; the accessibility tree is sent whole. `iwr` — a tolerant
   * parse, an unknown index also goes to the vision fallback, the tree capped.
   */
  grounding: "harness" | "iwr";
  /** Per-call limits of the model parts in ms (the harness's clients), or undefined for each model spec's own. */
  modelTimeoutsMs: Readonly<{ grounding: number; assertion: number; visual: number }> | undefined;
  /** Opening the page. */
  navigationTimeoutMs: number;
  /** The assertion judge's output budget (the harness sends max_tokens 4096), or undefined for the judge spec's own. */
  assertionMaxTokens: number | undefined;
  /**
   * A model's page replayed with the task's recorded seed and clock start (`task-seed`,
   * deterministic mode) or as the harness does, unseeded (`unseeded`). Calibration
   * candidates built from the true page are replayed seeded under either profile.
   */
  modelPageDeterminism: "task-seed" | "unseeded";
  /** The judges' prompt templates (prompts/): the official ones name no action and do not say which image is the reference, as the harness's. */
  prompts: Readonly<{ assertion: string; visual: string }>;
}

export const PROFILE_RULES: Readonly<Record<ProtocolProfile, Readonly<ProfileRules>>> = Object.freeze({
  official: Object.freeze({
    pairing: "official",
    visualBoundary: "harness",
    judgeFailure: "error",
    judgeAttempts: 1,
    judgeParse: "harness",
    blankAssertion: "judged",
    scoreCutEntries: true,
    textlessPairs: "text-similarity",
    averageOver: "tasks-with-page",
    frameCount: "floor",
    replyFence: "closed-only",
    unusableReply: "write",
    sheetsOverCap: "sheets-only",
    frameFormat: "jpeg",
    screenshotSettle: "fixed-waits",
    timings: Object.freeze({ initialSettleMs: 1000, actionSettleMs: 500, screenshotDelayMs: 200, scrollExtraSettleMs: 1000 }),
    reportStyle: "harness",
    missingResolution: "harness",
    typeTextToModel: "withheld",
    prompts: Object.freeze({ assertion: "judge-assertion-official", visual: "judge-visual-official" }),
    actionStyle: "harness",
    scrollbars: "visible",
    grounding: "harness",
    modelTimeoutsMs: Object.freeze({ grounding: 180_000, assertion: 120_000, visual: 300_000 }),
    navigationTimeoutMs: 60_000,
    assertionMaxTokens: 4096,
    modelPageDeterminism: "unseeded",
  }),
  corrected: Object.freeze({
    pairing: "aligned",
    visualBoundary: "through-no",
    judgeFailure: "no",
    judgeAttempts: 3,
    judgeParse: "iwr",
    blankAssertion: "skipped",
    scoreCutEntries: false,
    textlessPairs: "visual-similarity",
    averageOver: "all-tasks",
    frameCount: "ceil",
    replyFence: "open-allowed",
    unusableReply: "fail",
    sheetsOverCap: "fail",
    frameFormat: "png",
    screenshotSettle: "at-rest",
    timings: Object.freeze({
      initialSettleMs: PROTOCOL.initialSettleMs,
      actionSettleMs: PROTOCOL.actionSettleMs,
      screenshotDelayMs: 0,
      scrollExtraSettleMs: 0,
    }),
    reportStyle: "iwr",
    missingResolution: "refuse",
    typeTextToModel: "given",
    prompts: Object.freeze({ assertion: "judge-assertion", visual: "judge-visual" }),
    actionStyle: "iwr",
    scrollbars: "hidden",
    grounding: "iwr",
    modelTimeoutsMs: undefined,
    navigationTimeoutMs: 30_000,
    assertionMaxTokens: undefined,
    modelPageDeterminism: "task-seed",
  }),
});

export function profileRules(profile: ProtocolProfile): Readonly<ProfileRules> {
  return PROFILE_RULES[profile];
}
