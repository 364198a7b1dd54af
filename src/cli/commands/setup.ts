import type { Command } from "commander";
import { ensureTools } from "../../setup/ensure-tools.ts";

export function registerSetupCommand(program: Command): void {
  program
    .command("setup")
    .description("find Chromium, ffmpeg and redis-server (queue mode only); install them with apt-get when missing and running as root on Debian/Ubuntu")
    .action(() => {
      const report = ensureTools();
      console.error(
        `setup: chromium ${report.chromium.path} (${report.chromium.source}); ffmpeg ${report.ffmpeg.path} (${report.ffmpeg.source})` +
          `${report.redisServer ? `; redis-server ${report.redisServer}` : ""}`,
      );
    });
}
