/**
 * How well a feedback signal tracks the evaluator over a set of pages of one task:
 * Spearman's ρ of the two scores (midranks for ties), and the share of page pairs both
 * order the same way. A pair counts when the evaluator tells its pages apart (Finals
 * more than `EVALUATOR_TIE` apart: closer than that is the evaluator's own noise, not an
 * order to reproduce); it agrees when the signal orders it the same way, half when the
 * signal ties it.
 */
import { sampleRankCorrelation } from "simple-statistics";

export const EVALUATOR_TIE = 0.01;

export interface ScoredPage {
  label: string;
  evaluator: number;
  signal: number;
}

export interface Tracking {
  pages: number;
  /** NaN when either score is constant over the pages. */
  spearman: number;
  /** Pairs the evaluator tells apart. */
  pairs: number;
  /** Share of those the signal orders the same way (NaN without pairs). */
  pairwiseAgreement: number;
}

export function trackingOf(pages: readonly ScoredPage[]): Tracking {
  const spearman =
    pages.length < 2
      ? Number.NaN
      : sampleRankCorrelation(
          pages.map((page) => page.evaluator),
          pages.map((page) => page.signal),
        );
  let pairs = 0;
  let agreed = 0;
  for (let i = 0; i < pages.length; i++) {
    for (let j = i + 1; j < pages.length; j++) {
      const [a, b] = [pages[i]!, pages[j]!];
      const evaluatorOrder = a.evaluator - b.evaluator;
      if (Math.abs(evaluatorOrder) <= EVALUATOR_TIE) continue;
      pairs += 1;
      const signalOrder = a.signal - b.signal;
      if (signalOrder === 0) agreed += 0.5;
      else if (Math.sign(signalOrder) === Math.sign(evaluatorOrder)) agreed += 1;
    }
  }
  return { pages: pages.length, spearman, pairs, pairwiseAgreement: pairs === 0 ? Number.NaN : agreed / pairs };
}
