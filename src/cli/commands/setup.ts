import type { Command } from "commander";
import { ensureTools, setupSummary } from "../../setup/ensure-tools.ts";

export function registerSetupCommand(program: Command): void {
  program
    .command("setup")
    .description("find Chromium, ffmpeg and redis-server (queue mode only); install them with apt-get when missing and running as root on Debian/Ubuntu")
    .action(() => {
      console.error(setupSummary(ensureTools()));
    });
}
