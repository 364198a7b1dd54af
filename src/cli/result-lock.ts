/**
 * The lock `iwr generate`, `iwr evaluate` and `iwr agent` hold on a results folder for one
 * model's pages while they work: a second command on the same folder and model (making
 * pages while they are scored, or scoring them twice) is refused, naming the first.
 * Commands for other models share the folder freely.
 */
import fs from "node:fs";
import { type FolderLock, lockFolder } from "../files/folder-lock.ts";
import { checkOutputFolder } from "../files/output-folder.ts";
import { modelFolderName, resultsLockName } from "../results/layout.ts";

/**
 * `--result` checked (not empty, not a file, not the checkout or its source folders) and
 * locked for `model`. A command that only reads an existing folder (`iwr evaluate`) passes
 * `create: false`: a folder that is not there is left for the command to report.
 */
export function lockResults(resultDir: string, model: string, command: string, options: { create?: boolean } = {}): FolderLock {
  checkOutputFolder(resultDir, "--result");
  const modelDir = modelFolderName(model, "--model");
  if (options.create === false && !fs.existsSync(resultDir)) return { file: "", release: () => undefined };
  return lockFolder(resultDir, { name: resultsLockName(modelDir), command, what: `results folder of model ${modelDir}` });
}
