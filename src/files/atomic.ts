/**
 * The one way this project writes a file that someone may read at any moment (a
 * result, a cache entry, a task file): into a temp file in the same folder, then a
 * rename, so a reader or a killed run never sees half of it. Same folder, because a
 * rename is only atomic within one file system.
 */
import fs from "node:fs";
import path from "node:path";
import { IwrError } from "../errors.ts";

/** A temp name beside `file`, unique across processes and concurrent writers. */
export function tempPathBeside(file: string): string {
  const unique = `${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2, 10)}`;
  return path.join(path.dirname(file), `.${path.basename(file)}.${unique}.tmp`);
}

function writeFailure(file: string, error: unknown): IwrError {
  const reason = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
  return new IwrError("IO", `cannot write ${file}: ${reason}`, { file }, { cause: error });
}

export async function writeFileAtomic(file: string, data: string | Buffer): Promise<void> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  const temp = tempPathBeside(file);
  try {
    await fs.promises.writeFile(temp, data);
    await fs.promises.rename(temp, file);
  } catch (error) {
    await fs.promises.rm(temp, { force: true });
    throw writeFailure(file, error);
  }
}

export function writeFileAtomicSync(file: string, data: string | Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = tempPathBeside(file);
  try {
    fs.writeFileSync(temp, data);
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw writeFailure(file, error);
  }
}
