/**
 * Offline, deterministic grounding: ranks the page's interactive elements by how well
 * their visible text and labels match the action's description. No model call, so the
 * same candidate always gets the same element; calibration and CI run on it.
 *
 * Evidence, strongest first: a quoted string of the description equal to (or inside)
 * an element's text or label (symbols such as '+' or '×' compared as written); words
 * of the description in the text/labels; words in id/name/class. Only this "own"
 * evidence can make an element the described one. Ranking also uses the text around
 * the element (its card or row: "the 'Add' button under the Canvas Daypack"), the kind
 * of control named ("button", "field"), colour words, and positions ("the second card
 * in the third row").
 */

import { distance } from "fastest-levenshtein";
import { normalizeKey } from "../../browser/actions.ts";
import type { InteractiveElement } from "../../browser/element-index.ts";
import { normalizeText, quotedStrings, STOP_WORDS, stem, typedTextOf, words } from "./description-text.ts";
import type { Grounder, GroundingAnswer, GroundingContext, GroundingQuery, KeyAnswer } from "./types.ts";

/** Below this much own text/label evidence an element is not the described one (as a model's -1). */
export const HEURISTIC_MIN_EVIDENCE = 0.75;

const ROLE_WORDS: Record<string, readonly string[]> = {
  button: ["button"],
  btn: ["button"],
  icon: ["button", "link"],
  key: ["button"],
  link: ["link"],
  hyperlink: ["link"],
  input: ["textbox", "searchbox", "combobox"],
  field: ["textbox", "searchbox", "combobox"],
  textbox: ["textbox", "searchbox"],
  textarea: ["textbox"],
  box: ["textbox", "searchbox", "checkbox"],
  searchbox: ["searchbox", "textbox"],
  bar: ["searchbox", "textbox"],
  checkbox: ["checkbox"],
  check: ["checkbox"],
  radio: ["radio"],
  tab: ["tab"],
  dropdown: ["combobox", "button"],
  select: ["combobox"],
  option: ["option"],
  toggle: ["switch", "checkbox", "button"],
  switch: ["switch", "checkbox"],
  slider: ["slider"],
  menuitem: ["menuitem"],
  item: ["menuitem", "option", "link", "button"],
};
const KIND_ONLY_WORDS = new Set(["button", "btn", "input", "field", "link", "hyperlink", "box", "textbox", "textarea", "searchbox", "checkbox"]);
const COLOUR_WORDS = new Set(["black", "white", "gray", "grey", "red", "orange", "yellow", "green", "teal", "blue", "purple", "pink", "brown"]);
const ORDINALS: Record<string, number> = { first: 0, second: 1, third: 2, fourth: 3, fifth: 4, sixth: 5, top: 0, last: -1, bottom: -1, middle: -2 };
const POSITION = /\b(first|second|third|fourth|fifth|sixth|top|middle|bottom|last)\s+(row|column)\b/gi;
const ITEM_ORDINAL = /\b(first|second|third|fourth|fifth|sixth|last)\b(?!\s+(?:row|column)\b)/i;
const TEXT_ENTRY_ROLES = new Set(["textbox", "searchbox", "combobox"]);

interface ParsedDescription {
  quoted: Array<{ raw: string; normalized: string }>;
  contentWords: string[];
  /** Adjacent content words ("second card", "third row"): word order tells "the second card in the third row" from "the third card in the second row". */
  bigrams: Set<string>;
  roles: Set<string>;
  colours: Set<string>;
  /** "the second card": position among equally good elements, in reading order. */
  itemOrdinal?: number;
  row?: number;
  column?: number;
}

function bigramsOf(sequence: readonly string[]): Set<string> {
  const pairs = new Set<string>();
  for (let index = 1; index < sequence.length; index++) pairs.add(`${sequence[index - 1]} ${sequence[index]}`);
  return pairs;
}

/** Content words of a text in order: stop words out, stemmed. */
function contentSequence(text: string): string[] {
  return words(text)
    .filter((word) => !STOP_WORDS.has(word))
    .map(stem);
}

function parseDescription(description: string): ParsedDescription {
  const quoted = quotedStrings(description).map((raw) => ({ raw: raw.toLowerCase(), normalized: normalizeText(raw) }));
  const quotedWords = new Set(quoted.flatMap((q) => q.normalized.split(" ")));
  const roles = new Set<string>();
  const colours = new Set<string>();
  const contentWords: string[] = [];
  for (const word of words(description)) {
    if (STOP_WORDS.has(word)) continue;
    const roleKinds = ROLE_WORDS[word] ?? ROLE_WORDS[stem(word)];
    if (roleKinds) for (const role of roleKinds) roles.add(role);
    if (COLOUR_WORDS.has(word) && !quotedWords.has(word)) {
      colours.add(word === "grey" ? "gray" : word);
      continue;
    }
    // Generic control words only say what kind of element it is; words like "menu" or "tab" are also content.
    if (KIND_ONLY_WORDS.has(word)) continue;
    contentWords.push(stem(word));
  }
  const parsed: ParsedDescription = { quoted, contentWords: [...new Set(contentWords)], bigrams: bigramsOf(contentWords), roles, colours };
  const unquoted = quoted.reduce((text, q) => text.replace(q.raw, " "), description.toLowerCase());
  for (const match of unquoted.matchAll(POSITION)) {
    const place = ORDINALS[match[1]?.toLowerCase() ?? ""];
    if (match[2]?.toLowerCase() === "row") parsed.row = place;
    else parsed.column = place;
  }
  const item = ITEM_ORDINAL.exec(unquoted.replace(POSITION, " "));
  if (item?.[1]) parsed.itemOrdinal = ORDINALS[item[1].toLowerCase()];
  return parsed;
}

export interface ScoredElement {
  element: InteractiveElement;
  /** Evidence from the element's own text and attributes (decides "found"). */
  evidence: number;
  score: number;
}

function primaryTexts(el: InteractiveElement): string[] {
  return [el.text, el.ariaLabel, el.label, el.placeholder, el.value, el.title, el.alt].filter(Boolean);
}

function secondaryTexts(el: InteractiveElement): string[] {
  const classes = el.className
    .split(/\s+/)
    .filter((name) => name && name !== "btn")
    .join(" ");
  return [el.id, el.name, classes].map((text) => words(text).join(" ")).filter(Boolean);
}

/** How well one quoted string matches one text: exact 6, whole-phrase inside up to 5, near-miss 3. */
function quotedMatch(quoted: { raw: string; normalized: string }, rawText: string): number {
  const text = normalizeText(rawText);
  if (!quoted.normalized) {
    // Symbols only ('+', '×', '↑'): compared as written.
    const raw = rawText.trim().toLowerCase();
    if (raw === quoted.raw) return 6;
    return raw.split(/\s+/).includes(quoted.raw) ? 3 : 0;
  }
  if (text === quoted.normalized) return 6;
  if (` ${text} `.includes(` ${quoted.normalized} `)) return 3 + 2 * (quoted.normalized.length / text.length);
  const longer = Math.max(quoted.normalized.length, text.length);
  if (longer > 0 && 1 - distance(quoted.normalized, text) / longer >= 0.8) return 3;
  return 0;
}

function scoreElement(el: InteractiveElement, parsed: ParsedDescription, query: GroundingQuery): ScoredElement {
  const primary = primaryTexts(el);
  const secondary = secondaryTexts(el);
  const context = normalizeText(el.context);
  let evidence = 0;
  let around = 0;
  for (const quoted of parsed.quoted) {
    const own = Math.max(0, ...primary.map((text) => quotedMatch(quoted, text)));
    const weak = Math.max(0, ...secondary.map((text) => quotedMatch(quoted, text))) * 0.4;
    evidence += Math.max(own, weak);
    // A quoted name of what the element sits in ("under the 'Red Lentil Soup' card").
    if (own === 0 && quoted.normalized && ` ${context} `.includes(` ${quoted.normalized} `)) around += 2;
  }
  const primaryWords = new Set(primary.flatMap((text) => words(text)).map(stem));
  const secondaryWords = new Set(secondary.flatMap((text) => text.split(" ")).map(stem));
  const contextWords = new Set(context.split(" ").map(stem));
  let matched = 0;
  for (const word of parsed.contentWords) {
    if (primaryWords.has(word)) {
      evidence += 1;
      matched += 1;
    } else if (secondaryWords.has(word)) {
      evidence += 0.6;
    } else if (contextWords.has(word)) {
      around += 0.3;
    }
  }
  for (const text of primary) {
    for (const pair of bigramsOf(contentSequence(text))) if (parsed.bigrams.has(pair)) evidence += 0.5;
  }
  // Precision: among elements sharing the words, the one with the fewest other words is the named one.
  const precision = primaryWords.size > 0 ? matched / primaryWords.size : 0;
  let score = evidence + around + 0.5 * precision;
  const buttonLike = el.role === "button" || /(^|\s)btn(\s|$)/.test(el.className);
  if (parsed.roles.has(el.role) || (parsed.roles.has("button") && buttonLike)) score += 0.5;
  if (el.backgroundColor && parsed.colours.has(el.backgroundColor)) score += 0.4;
  else if (el.textColor && parsed.colours.has(el.textColor)) score += 0.2;
  if (query.actionType === "Type" && !TEXT_ENTRY_ROLES.has(el.role)) score -= 1;
  if (el.disabled) score -= 0.5;
  if (!el.inViewport) score -= 0.1;
  return { element: el, evidence, score };
}

/** Ranks elements, best first; among equals, document order decides (deterministic). */
export function rankElements(query: GroundingQuery, elements: readonly InteractiveElement[]): ScoredElement[] {
  const parsed = parseDescription(query.description);
  return elements.map((el) => scoreElement(el, parsed, query)).sort((a, b) => b.score - a.score || a.element.index - b.element.index);
}

function nth<T>(items: readonly T[], place: number): T | undefined {
  if (place === -1) return items[items.length - 1];
  if (place === -2) return items[Math.floor((items.length - 1) / 2)];
  return items[place];
}

/** Groups boxes into rows (top to bottom), each row left to right. */
function rowsOf(peers: readonly ScoredElement[]): ScoredElement[][] {
  const centreY = (s: ScoredElement) => s.element.box.y + s.element.box.height / 2;
  const sorted = [...peers].sort((a, b) => centreY(a) - centreY(b) || a.element.box.x - b.element.box.x);
  const rows: ScoredElement[][] = [];
  for (const scored of sorted) {
    const row = rows[rows.length - 1];
    const first = row?.[0];
    if (row && first && Math.abs(centreY(scored) - centreY(first)) < Math.max(4, Math.min(first.element.box.height, scored.element.box.height) / 2)) {
      row.push(scored);
    } else {
      rows.push([scored]);
    }
  }
  return rows.map((row) => row.sort((a, b) => a.element.box.x - b.element.box.x));
}

/** Among elements that match equally well, the one the description's ordinal or grid position names. */
function pickByPosition(ranked: ScoredElement[], parsed: ParsedDescription): ScoredElement | undefined {
  const best = ranked[0];
  if (!best) return undefined;
  const peers = ranked.filter((s) => s.score >= best.score - 0.05);
  if (peers.length < 2) return best;
  if (parsed.row !== undefined || parsed.column !== undefined) {
    let pool = peers;
    if (parsed.row !== undefined) pool = nth(rowsOf(pool), parsed.row) ?? [];
    if (parsed.column !== undefined) {
      pool = pool.filter((s) => {
        const row = rowsOf(peers).find((r) => r.includes(s)) ?? [];
        return nth(row, parsed.column ?? 0) === s;
      });
    }
    const sorted = [...pool].sort((a, b) => a.element.box.x - b.element.box.x);
    return (parsed.itemOrdinal !== undefined ? nth(sorted, parsed.itemOrdinal) : sorted[0]) ?? best;
  }
  if (parsed.itemOrdinal === undefined) return best;
  const inOrder = [...peers].sort((a, b) => a.element.index - b.element.index);
  return nth(inOrder, parsed.itemOrdinal) ?? best;
}

/** The only element of the named kind, when the description names a kind but no words match ("the search box"). */
function soleOfKind(parsed: ParsedDescription, elements: readonly InteractiveElement[]): InteractiveElement | undefined {
  if (parsed.roles.size === 0 || parsed.quoted.length > 0) return undefined;
  const ofKind = elements.filter((el) => parsed.roles.has(el.role) && !el.disabled);
  return ofKind.length === 1 ? ofKind[0] : undefined;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

export function createHeuristicGrounder(): Grounder {
  return {
    kind: "heuristic",
    promptHashes: {},
    async locate(asked: GroundingQuery, context: GroundingContext): Promise<GroundingAnswer> {
      // A Type line without its text (the real dataset's): the text is read off the description, and the target is what remains.
      const typed = asked.actionType === "Type" ? typedTextOf(asked.description, asked.text) : undefined;
      const query: GroundingQuery = typed ? { ...asked, description: typed.target, text: typed.text } : asked;
      const parsed = parseDescription(query.description);
      const ranked = rankElements(query, context.elements);
      const chosen = pickByPosition(ranked, parsed);
      const runner = ranked.find((s) => s !== chosen);
      const runnerUp = runner ? { index: runner.element.index, score: round(runner.score) } : undefined;
      const text = query.actionType === "Type" ? { text: query.text ?? "" } : {};
      if (chosen && chosen.evidence >= HEURISTIC_MIN_EVIDENCE) {
        return { index: chosen.element.index, ...text, method: "heuristic", score: round(chosen.score), ...(runnerUp ? { runnerUp } : {}), exchanges: [] };
      }
      const sole = soleOfKind(parsed, context.elements);
      if (sole) return { index: sole.index, ...text, method: "heuristic", score: 0, ...(runnerUp ? { runnerUp } : {}), exchanges: [] };
      return {
        index: -1,
        method: "heuristic",
        ...(chosen ? { score: round(chosen.score) } : {}),
        ...(runnerUp ? { runnerUp } : {}),
        exchanges: [],
        reason:
          context.elements.length === 0
            ? "the page has no interactive elements"
            : `no element matches the description well enough (best evidence ${round(chosen?.evidence ?? 0)} < ${HEURISTIC_MIN_EVIDENCE})`,
      };
    },
    async nameKey(description: string): Promise<KeyAnswer> {
      const key = keyFromDescription(description);
      return key ? { key, exchanges: [] } : { exchanges: [], reason: `no key name found in '${description}'` };
    },
  };
}

const KEY_WORDS = /\b(enter|return|escape|esc|tab|space(?:bar)?|backspace|delete|arrow ?(?:up|down|left|right)|page ?(?:up|down)|home|end)\b/i;

/** "press the Enter key" → Enter; a quoted key wins: "press 'k'" → k. */
export function keyFromDescription(description: string): string | undefined {
  const quoted = quotedStrings(description)[0];
  if (quoted && quoted.length <= 20) return normalizeKey(quoted);
  const match = KEY_WORDS.exec(description);
  return match?.[1] ? normalizeKey(match[1]) : undefined;
}
