/**
 * Symbolic links inside a folder that lead out of it. A folder of pages taken from
 * elsewhere (an experiment's `results:` arm) is copied into the run: a link in it to /etc
 * or to a home folder would be copied as a link and served or read as if it were the
 * page's own file. Such a folder is refused, naming the links.
 */
import fs from "node:fs";
import path from "node:path";

/** Entries looked at most: a folder of pages is thousands, not millions. */
const MAX_ENTRIES = 200_000;

/** Where a link points, resolved as far as it exists (a dangling link by its text). */
function linkTarget(link: string): string {
  try {
    return fs.realpathSync(link);
  } catch {
    return path.resolve(path.dirname(link), fs.readlinkSync(link));
  }
}

/** Up to `limit` links under `dir` whose targets are outside it, as "link → target". */
export function linksLeaving(dir: string, limit = 5): string[] {
  const root = fs.realpathSync(dir);
  const found: string[] = [];
  const pending = [dir];
  let seen = 0;
  while (pending.length > 0 && found.length < limit && seen < MAX_ENTRIES) {
    const current = pending.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      seen += 1;
      const full = path.join(current, entry.name);
      if (entry.isSymbolicLink()) {
        const target = linkTarget(full);
        if (target !== root && !target.startsWith(`${root}${path.sep}`)) found.push(`${full} → ${target}`);
      } else if (entry.isDirectory()) pending.push(full);
      if (found.length >= limit) break;
    }
  }
  return found;
}
