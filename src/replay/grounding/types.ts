/**
 * Grounding: turning an action's natural-language description into one of the
 * page's numbered interactive elements (docs/protocol.md §3.2). Two implementations
 * share this interface: `llm` (the benchmark's way, a text model with a vision
 * fallback) and `heuristic` (offline and deterministic, for calibration and CI).
 */
import type { InteractiveElement } from "../../browser/element-index.ts";
import type { TextBlock } from "../../browser/text-blocks.ts";

export type GrounderKind = "llm" | "heuristic";

/** What a grounder may look at. Expensive views are lazy: the heuristic never asks for them. */
export interface GroundingContext {
  elements: readonly InteractiveElement[];
  accessibilityTree(): Promise<string>;
  /** A viewport screenshot with every element's number drawn on it. */
  highlightedScreenshot(): Promise<Buffer>;
  /** The page's visible text with its boxes (the heuristic reads it for "under 'Total'"); absent, relations use element texts only. */
  textBlocks?(): Promise<readonly TextBlock[]>;
}

export interface GroundingQuery {
  actionType: "Click" | "Type";
  description: string;
  /** Type only: the trajectory's text (the llm may restate it). */
  text?: string;
}

/** One model exchange, kept in eval.json so a surprising choice can be read back. */
export interface GroundingExchange {
  stage: "text" | "vision" | "key";
  reply: string;
  requestHash?: string;
  cacheHit?: boolean;
  latencyMs?: number;
}

export interface GroundingAnswer {
  /** Element number, or -1 when nothing matches (the step then fails). */
  index: number;
  /** Type only: the text to type. */
  text?: string;
  method: "text" | "vision" | "heuristic";
  /** Heuristic only: the winning score and the runner-up, for reading calibration results. */
  score?: number;
  runnerUp?: { index: number; score: number };
  /** Heuristic only: why this element, in words (which rule decided, what narrowed the candidates). */
  why?: string;
  exchanges: GroundingExchange[];
  /** Why nothing was found, when index is -1. */
  reason?: string;
}

export interface KeyAnswer {
  /** A key name Playwright understands, or undefined when none could be named. */
  key?: string;
  exchanges: GroundingExchange[];
  reason?: string;
}

export interface Grounder {
  readonly kind: GrounderKind;
  /** Prompt name → sha256 of its template, recorded with every result (empty for the heuristic). */
  readonly promptHashes: Readonly<Record<string, string>>;
  locate(query: GroundingQuery, context: GroundingContext): Promise<GroundingAnswer>;
  /** Press actions without `parameters.key`: name the key from the description. */
  nameKey(description: string): Promise<KeyAnswer>;
}
