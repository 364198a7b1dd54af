import type { Command } from "commander";
import { registerSetupCommand } from "./setup.ts";
import { registerStartCommand } from "./start.ts";

/** Every `iwr` sub-command, one line each. */
export function registerCommands(program: Command): void {
  registerSetupCommand(program);
  registerStartCommand(program);
}
