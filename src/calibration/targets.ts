/** The evaluator's calibration targets (issue: reference ceiling, blank floor), aligned pairing. */
export const CALIBRATION_TARGETS = Object.freeze({ referenceFinalMin: 0.9, blankFinalMax: 0.15 });
