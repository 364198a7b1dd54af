/**
 * The evaluator's calibration targets (issue: reference ceiling, blank floor), aligned pairing.
 * The true page must reach the Final floor on every task, not only on average: a task where
 * even the truth scores low is one whose visual marks cannot tell a right page from a wrong
 * one. The blank pages' ceiling is on their mean.
 */
export const CALIBRATION_TARGETS = Object.freeze({ referenceFinalMin: 0.9, blankFinalMax: 0.15 });
