/**
 * Counts kept for each stage of a staged reading (the judge reads the candidate's screens
 * and the true page's in stages, each only for what the ones before it left open): the
 * stage names in the order the stages run, and the same counters for each. Calibration
 * prints them with stageTalliesTable, so that each stage is kept for what it finds for what
 * it costs. The tallies cover one process, from its start.
 */

/** One stage's counters, under the stage's name. */
export type StageTally<Count extends string> = { readonly stage: string } & Readonly<Record<Count, number>>;

export class StageTallies<Count extends string> {
  readonly #counts = new Map<string, Record<Count, number>>();

  constructor(
    readonly stages: readonly string[],
    counts: readonly Count[],
  ) {
    for (const stage of stages) this.#counts.set(stage, Object.fromEntries(counts.map((count) => [count, 0])) as Record<Count, number>);
  }

  /** Adds to one counter of one stage. */
  add(stage: string, count: Count, amount = 1): void {
    const counts = this.#counts.get(stage);
    if (!counts) throw new Error(`no reading stage named '${stage}' (stages: ${this.stages.join("; ")})`);
    counts[count] += amount;
  }

  /** A copy of every stage's counters, in the order the stages run. */
  snapshot(): Array<StageTally<Count>> {
    return this.stages.map((stage) => ({ stage, ...this.#counts.get(stage)! }));
  }
}

/**
 * The tallies as a Markdown table: a row for each stage, a column for each counter (under
 * the title given), then closing rows that carry one figure in the last column (what no
 * stage settled, what only one stage decided).
 */
export function stageTalliesTable<Count extends string>(options: {
  heading: string;
  columns: ReadonlyArray<readonly [Count, string]>;
  tallies: ReadonlyArray<StageTally<Count>>;
  closingRows?: ReadonlyArray<readonly [string, number]>;
}): string {
  const { heading, columns, tallies, closingRows = [] } = options;
  const emptyCells = " |".repeat(columns.length - 1);
  return [
    `| ${heading} | ${columns.map(([, title]) => title).join(" | ")} |`,
    `|---|${columns.map(() => "---:").join("|")}|`,
    ...tallies.map((tally) => `| ${tally.stage} | ${columns.map(([count]) => tally[count]).join(" | ")} |`),
    ...closingRows.map(([label, figure]) => `| ${label} |${emptyCells} ${figure} |`),
  ].join("\n");
}
