/**
 * Search/replace edits of a page, in the form prompts/revise-edits.md asks for:
 *
 *   <<<<<<< SEARCH
 *   lines copied from the page
 *   =======
 *   the lines that replace them
 *   >>>>>>> REPLACE
 *
 * An edit applies when its SEARCH text occurs exactly once in the page as it stands
 * after the edits before it. A reply without a single block, or with any edit that does
 * not apply, is not applied at all (a half-edited page is worse than either).
 */
const BLOCK = /<{5,9} ?SEARCH[^\n]*\n([\s\S]*?)\n?={5,9}[^\n]*\n([\s\S]*?)\n?>{5,9} ?REPLACE/g;

export interface Edit {
  search: string;
  replace: string;
}

export function parseEdits(reply: string): Edit[] {
  return Array.from(reply.matchAll(BLOCK), (match) => ({ search: match[1] ?? "", replace: match[2] ?? "" }));
}

export interface EditOutcome {
  proposed: number;
  applied: number;
  /** Why each edit that failed did (empty when all applied). */
  failed: string[];
  /** The edited page, when every edit applied. */
  page?: string;
}

const occurrences = (text: string, part: string) => {
  let count = 0;
  for (let at = text.indexOf(part); at >= 0 && count < 2; at = text.indexOf(part, at + 1)) count += 1;
  return count;
};

export function applyEdits(page: string, edits: readonly Edit[]): EditOutcome {
  const failed: string[] = [];
  let edited = page;
  let applied = 0;
  edits.forEach((edit, index) => {
    const preview = JSON.stringify(edit.search.trim().slice(0, 60));
    if (edit.search.trim() === "") {
      failed.push(`edit ${index + 1}: its SEARCH part is empty`);
      return;
    }
    const found = occurrences(edited, edit.search);
    if (found === 0) failed.push(`edit ${index + 1}: ${preview} is not in the page`);
    else if (found > 1) failed.push(`edit ${index + 1}: ${preview} occurs more than once`);
    else {
      edited = edited.replace(edit.search, () => edit.replace);
      applied += 1;
    }
  });
  if (edits.length === 0) failed.push("the reply holds no SEARCH/REPLACE block");
  return { proposed: edits.length, applied, failed, ...(failed.length === 0 ? { page: edited } : {}) };
}
