import type { Command } from "commander";
import { registerSetupCommand } from "./setup.ts";
import { registerStartCommand } from "./start.ts";
import { registerTasksCommand } from "./tasks.ts";
import { registerCacheCommand } from "./cache.ts";
import { registerRecordCommand } from "./record.ts";
import { registerEvaluateCommand } from "./evaluate.ts";
import { registerGenerateCommand } from "./generate.ts";
import { registerSelfCheckCommand } from "./selfcheck.ts";
import { registerMutateCommand } from "./mutate.ts";
import { registerAgentCommand } from "./agent.ts";
import { registerRunCommand } from "./run.ts";
import { registerWorkerCommand } from "./worker.ts";

/** Every `iwr` sub-command, one line each. */
export function registerCommands(program: Command): void {
  registerSetupCommand(program);
  registerStartCommand(program);
  registerTasksCommand(program);
  registerCacheCommand(program);
  registerRecordCommand(program);
  registerEvaluateCommand(program);
  registerGenerateCommand(program);
  registerSelfCheckCommand(program);
  registerMutateCommand(program);
  registerAgentCommand(program);
  registerRunCommand(program);
  registerWorkerCommand(program);
}
