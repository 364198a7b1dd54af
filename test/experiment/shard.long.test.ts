/**
 * Shard mode end to end (about a minute, so in `npm run test:long`): `iwr run --shard i/n`
 * runs a deterministic share of the cells, the index may come from a Kubernetes Indexed Job,
 * and `iwr merge` combines the shards' folders into the report of one unsharded run,
 * refusing folders of another config. The index arithmetic is in shard.test.ts.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runIwrCapturing } from "../support/cli.ts";
import { DATA, evaluatorBlock, experimentFixture, readJson, TEST_MS, writeConfig } from "../support/experiment.ts";

const fixture = experimentFixture("experiment-shard");

const configBody = (arms: string) => `tasks:
  file: ${DATA}
  ids: [1, 2]
${evaluatorBlock}arms:
${arms}`;
const ARMS = "  - name: blank\n    kind: blank\n  - name: frozen\n    kind: mutant:freeze-after:0\n";

const reportOf = (runDir: string) => {
  const report = readJson(path.join(runDir, "report.json"));
  // Wall times are the one thing two runs of the same cells do not share.
  return {
    arms: report.arms.map(({ wallMs: _wall, ...arm }: Record<string, unknown>) => arm),
    cells: report.cells.map((cell: Record<string, unknown>) => ({
      arm: cell.arm,
      repeat: cell.repeat,
      taskId: cell.taskId,
      status: cell.status,
      ifs: cell.ifs,
      vfs: cell.vfs,
      final: cell.final,
    })),
    byClass: report.byClass,
    comparison: report.comparison,
  };
};
const cellKeysOf = (runDir: string) =>
  fs
    .readdirSync(runDir, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith("cell.json"))
    .map((name) => readJson(path.join(runDir, name)).cellKey as string)
    .sort();

describe("shards", () => {
  it(
    "two shards merged give the same report as one unsharded run; shards of another config are refused",
    async () => {
      const base = fixture.dir();
      const config = writeConfig(path.join(base, "sharded.yaml"), configBody(ARMS));
      expect(await runIwrCapturing([], ["run", config, "--out", path.join(base, "whole")])).toBe(0);
      const shardOutput: string[] = [];
      expect(await runIwrCapturing(shardOutput, ["run", config, "--shard", "0/2", "--out", path.join(base, "shard-0")])).toBe(0);
      // The second shard's index from a Kubernetes Indexed Job.
      process.env.JOB_COMPLETION_INDEX = "1";
      try {
        expect(await runIwrCapturing([], ["run", config, "--shard", "auto/2", "--out", path.join(base, "shard-1")])).toBe(0);
      } finally {
        delete process.env.JOB_COMPLETION_INDEX;
      }
      const shard0 = cellKeysOf(path.join(base, "shard-0"));
      const shard1 = cellKeysOf(path.join(base, "shard-1"));
      expect(shard0).toHaveLength(2);
      expect(shard1).toHaveLength(2);
      expect(shard0.filter((key) => shard1.includes(key))).toEqual([]);
      expect([...shard0, ...shard1].sort()).toEqual(cellKeysOf(path.join(base, "whole")));
      // A shard's own report covers its share only.
      expect(readJson(path.join(base, "shard-0", "report.json")).arms.reduce((total: number, arm: { cells: number }) => total + arm.cells, 0)).toBe(2);

      const merged = path.join(base, "merged");
      const output: string[] = [];
      expect(await runIwrCapturing(output, ["merge", path.join(base, "shard-0"), path.join(base, "shard-1"), "--out", merged])).toBe(0);
      expect(output.join("\n")).toMatch(/4 cell\(s\) copied, 0 already there, 4 of 4 present/);
      expect(reportOf(merged)).toEqual(reportOf(path.join(base, "whole")));
      expect(cellKeysOf(merged)).toEqual(cellKeysOf(path.join(base, "whole")));
      // Merging again adds nothing and changes nothing.
      const again: string[] = [];
      expect(await runIwrCapturing(again, ["merge", path.join(base, "shard-0"), path.join(base, "shard-1"), "--out", merged])).toBe(0);
      expect(again.join("\n")).toMatch(/0 cell\(s\) copied, 4 already there/);

      // One shard alone merges with the rest reported missing.
      const partial: string[] = [];
      expect(await runIwrCapturing(partial, ["merge", path.join(base, "shard-0"), "--out", path.join(base, "partial")])).toBe(1);
      expect(partial.join("\n")).toMatch(/2 cell\(s\) of the run are in no folder yet/);

      // Shards sharing one folder would overwrite each other's run.json.
      const noOut: string[] = [];
      expect(await runIwrCapturing(noOut, ["run", config, "--shard", "0/2"])).toBe(2);
      expect(noOut.join("\n")).toMatch(/--shard needs --out/);

      // A shard of another config (one arm less) is refused, naming both folders.
      const other = writeConfig(path.join(base, "other.yaml"), configBody("  - name: blank\n    kind: blank\n"));
      expect(await runIwrCapturing([], ["run", other, "--shard", "1/2", "--out", path.join(base, "other-1")])).toBe(0);
      const refused: string[] = [];
      expect(await runIwrCapturing(refused, ["merge", path.join(base, "shard-0"), path.join(base, "other-1"), "--out", path.join(base, "mixed")])).toBe(2);
      expect(refused.join("\n")).toMatch(
        new RegExp(
          "merge: .*other-1 and .*shard-0 were made by different configs \\(run keys [0-9a-f]{16} and [0-9a-f]{16}: " +
            ".*other\\.yaml vs .*sharded\\.yaml\\); only shards of one run merge",
        ),
      );
      expect(fs.existsSync(path.join(base, "mixed"))).toBe(false);
    },
    TEST_MS,
  );
});
