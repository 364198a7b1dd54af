import type { Command } from "commander";
import { taskIdList } from "../options.ts";

interface MutateCliOptions {
  data: string;
  result: string;
  ids?: number[];
  operators?: string[];
}

function operatorList(text: string, previous: string[] = []): string[] {
  return [
    ...previous,
    ...text
      .split(",")
      .map((part) => part.trim())
      .filter(Boolean),
  ];
}

/** `iwr mutate`: graded wrong pages made from each task's true page, in the results layout. */
export function registerMutateCommand(program: Command): void {
  program
    .command("mutate")
    .description("write mutants of each task's reference page: <result>/<id>/mutant-<operator>[-<parameter>]/index.html + mutant.json")
    .requiredOption("--data <jsonl>", "task file whose tasks have reference/index.html (recorded tasks do)")
    .requiredOption("--result <dir>", "results folder")
    .option("--ids <ids...>", "only these task ids", taskIdList)
    .option(
      "--operators <list...>",
      "operators, e.g. freeze-after:2,no-script,text:0.3 (default: the ladder: freeze-after at 0, n/3, 2n/3 and one of each other)",
      operatorList,
    )
    .action(async (options: MutateCliOptions) => {
      const { runMutate } = await import("../../calibration/mutate.ts");
      const written = await runMutate({
        dataPath: options.data,
        resultDir: options.result,
        ...(options.ids ? { ids: options.ids } : {}),
        ...(options.operators ? { operators: options.operators } : {}),
      });
      for (const entry of written) console.log(`task ${entry.taskId}: ${entry.label} → ${entry.dir}`);
      console.log(`wrote ${written.length} mutant page(s)`);
    });
}
