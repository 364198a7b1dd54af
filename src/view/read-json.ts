/** Reading another module's record loosely: the view shows what a record has and notes what it could not read. */
import fs from "node:fs";
import path from "node:path";
import { errorMessage } from "../errors.ts";

/** A JSON file, or undefined when absent; a problem is noted when it is there but unreadable. */
export function readLooseJson<T>(file: string, problems: string[]): T | undefined {
  if (!fs.existsSync(file)) return undefined;
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as T;
  } catch (error) {
    problems.push(`${path.basename(file)}: ${errorMessage(error)}`);
    return undefined;
  }
}
