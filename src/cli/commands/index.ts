import type { Command } from "commander";
import { registerAgentCommand } from "./agent.ts";
import { registerCacheCommand } from "./cache.ts";
import { registerEvaluateCommand } from "./evaluate.ts";
import { registerGenerateCommand } from "./generate.ts";
import { registerMutateCommand } from "./mutate.ts";
import { registerRecordCommand } from "./record.ts";
import { registerRunCommand } from "./run.ts";
import { registerSelfCheckCommand } from "./selfcheck.ts";
import { registerSetupCommand } from "./setup.ts";
import { registerStartCommand } from "./start.ts";
import { registerTasksCommand } from "./tasks.ts";
import { registerViewCommand } from "./view.ts";
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
  registerViewCommand(program);
}
