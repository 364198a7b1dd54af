/**
 * Offline, deterministic grounding: ranks the page's interactive elements by how well
 * they fit the action's description. No model call, so the same candidate always gets
 * the same element; calibration and CI run on it. Every answer says why (`why`).
 *
 * How a description is read (description-parts.ts) and the rules, strongest first:
 *
 * 1. Named by its own words. A quoted string equal to (or inside) an element's text or
 *    label (symbols such as '+' or '×' compared as written), words of the description in
 *    its text and labels, words in its id, name and class. An element that shows no words
 *    (an icon) is named by what it shows: its icon's class, sprite and file names and its
 *    own class and id count as fully as text would, and so do the icon's usual names
 *    ("the delete button" is the one with `fa-trash`, "close" the one showing ×:
 *    icon-names.ts). Only this evidence can make an element the described one by name.
 * 2. Among elements named equally well, the description's look (colour of the element,
 *    of the box it sits in, round) and the words around it (its card: "the 'Add' button
 *    under the Lantern") rank them, then where it is chooses (placement.ts): the large or
 *    small one, the one next to some words, at a side of its card, at a place on the page,
 *    in a grid place, or by order.
 * 3. Named by kind and place. When no element's words name it but the description names a
 *    kind ("photo", "button", "icon", "field") and says which one by place, size or look
 *    ("the third photo in the top row", "the large photo", "the round button at the right
 *    of a card", "the red button"), the choice is among the visible elements of that kind,
 *    and a place rule that finds nothing fails it. Words that only say a kind or a place
 *    ("photo", "top", "third") never name an element on their own.
 * 4. The only element of the named kind ("the search box" on a page with one), unless the
 *    description quotes words that are not on the page.
 */

import { distance } from "fastest-levenshtein";
import { normalizeKey } from "../../browser/actions.ts";
import type { InteractiveElement } from "../../browser/element-index.ts";
import { bigramsOf, contentSequence, type DescriptionParts, namesALook, namesAPlace, parseDescription, type QuotedPart } from "./description-parts.ts";
import { normalizeText, quotedStrings, stem, typedTextOf, words } from "./description-text.ts";
import { meaningsOfText, meaningsOfWord } from "./icon-names.ts";
import { narrowByPlacement } from "./placement.ts";
import type { Grounder, GroundingAnswer, GroundingContext, GroundingQuery, KeyAnswer } from "./types.ts";

/** Below this much own evidence an element is not the described one by name (as a model's -1). */
export const HEURISTIC_MIN_EVIDENCE = 0.75;
/**
 * The rules' version, part of the evaluator's settings key (as a prompt's hash is for the
 * llm grounder): results grounded by older rules are scored again, not reused.
 */
export const HEURISTIC_RULES_VERSION = "2: kinds, icons, places, neighbours, looks";

const TEXT_ENTRY_ROLES = new Set(["textbox", "searchbox", "combobox"]);
/** Equal scores within this are ties, broken by place or order. */
const TIE = 0.05;

export interface ScoredElement {
  element: InteractiveElement;
  /** Own text and attributes naming it (decides "found by name"). */
  nameEvidence: number;
  /** nameEvidence plus the kind, order and place words it also shows (0.5 each). */
  evidence: number;
  score: number;
  /** How much of the named neighbour ("under the Lantern") its surroundings hold; not in the score. */
  neighbourInContext: number;
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

/** An element that shows no words: an icon, a picture, a symbol such as × or +. */
function showsNoWords(el: InteractiveElement): boolean {
  return !/[\p{L}\p{N}]/u.test(el.text);
}

function isPicture(el: InteractiveElement): boolean {
  return el.role === "img" || el.media === "img" || el.media === "background";
}

function isIcon(el: InteractiveElement): boolean {
  return showsNoWords(el) && (el.media !== "" || el.iconWords !== "" || el.text !== "");
}

function isButtonLike(el: InteractiveElement): boolean {
  return el.role === "button" || /(^|\s)btn(\s|$)/.test(el.className);
}

/** Whether the element is of a kind the description names (a photo, an icon, a button, a field...). */
function fitsKind(el: InteractiveElement, parts: DescriptionParts, query: GroundingQuery): boolean {
  if (query.actionType === "Type") return TEXT_ENTRY_ROLES.has(el.role);
  if (parts.picture && isPicture(el)) return true;
  if (parts.icon && isIcon(el)) return true;
  if (parts.roles.has(el.role) || (parts.roles.has("button") && isButtonLike(el))) return true;
  return false;
}

function namesAKind(parts: DescriptionParts, query: GroundingQuery): boolean {
  return query.actionType === "Type" || parts.picture || parts.icon || parts.roles.size > 0;
}

/** How well one quoted string matches one text: exact 6, whole-phrase inside up to 5, near-miss 3. */
function quotedMatch(quoted: QuotedPart, rawText: string): number {
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

function scoreElement(el: InteractiveElement, parts: DescriptionParts, query: GroundingQuery): ScoredElement {
  const primary = primaryTexts(el);
  const secondary = secondaryTexts(el);
  const context = normalizeText(el.context);
  const iconOnly = showsNoWords(el);
  // What an icon shows is its name: its icon's words, and its own class and id.
  const glyph = iconOnly ? [...secondary, words(el.iconWords).join(" ")].filter(Boolean) : [];
  const glyphMeanings = iconOnly ? meaningsOfText([...primary, ...glyph, el.iconWords, el.className, el.id].join(" ")) : new Set<string>();
  let nameEvidence = 0;
  let weakEvidence = 0;
  let around = 0;
  for (const quoted of parts.quoted) {
    const own = Math.max(0, ...primary.map((text) => quotedMatch(quoted, text)), ...glyph.map((text) => quotedMatch(quoted, text)));
    const weak = Math.max(0, ...secondary.map((text) => quotedMatch(quoted, text))) * 0.4;
    // A quoted symbol or icon name ('×', 'trash') on an icon that shows it by another name.
    const meant = iconOnly && [...meaningsOfText(quoted.raw)].some((meaning) => glyphMeanings.has(meaning)) ? 3 : 0;
    nameEvidence += Math.max(own, weak, meant);
    // A quoted name of what the element sits in ("under the 'Red Lentil Soup' card").
    if (own === 0 && quoted.normalized && ` ${context} `.includes(` ${quoted.normalized} `)) around += 2;
  }
  for (const quoted of parts.contextQuotes) if (quoted.normalized && ` ${context} `.includes(` ${quoted.normalized} `)) around += 2;
  const primaryWords = new Set(primary.flatMap((text) => words(text)).map(stem));
  const glyphWords = new Set(glyph.flatMap((text) => text.split(" ")).map(stem));
  const secondaryWords = new Set(secondary.flatMap((text) => text.split(" ")).map(stem));
  const contextWords = new Set(context.split(" ").map(stem));
  let matched = 0;
  let meant = false;
  for (const word of parts.contentWords) {
    if (primaryWords.has(word) || glyphWords.has(word)) {
      nameEvidence += 1;
      matched += 1;
    } else if (secondaryWords.has(word)) {
      nameEvidence += 0.6;
    } else {
      // An icon named by what it does or shows, in other words than its own ("remove" for a trash can).
      if (iconOnly && meaningsOfWord(word).some((meaning) => glyphMeanings.has(meaning))) meant = true;
      if (contextWords.has(word)) around += 0.3;
    }
  }
  if (meant) nameEvidence += 0.8;
  for (const word of parts.weakWords) if (primaryWords.has(word) || glyphWords.has(word)) weakEvidence += 0.5;
  for (const word of parts.contextWords) if (contextWords.has(word)) around += 0.5;
  // The neighbour's words in its surroundings ("under the Lantern": the Lantern's card) only break ties the geometry leaves (placement.ts).
  let neighbourInContext = 0;
  const neighbour = parts.relation;
  if (neighbour?.quoted?.normalized && ` ${context} `.includes(` ${neighbour.quoted.normalized} `)) neighbourInContext += 2;
  for (const word of neighbour?.words ?? []) if (contextWords.has(word)) neighbourInContext += 0.5;
  for (const text of primary) {
    for (const pair of bigramsOf(contentSequence(text))) if (parts.bigrams.has(pair)) nameEvidence += 0.5;
  }
  // Precision: among elements sharing the words, the one with the fewest other words is the named one.
  const precision = primaryWords.size > 0 ? matched / primaryWords.size : 0;
  const evidence = nameEvidence + weakEvidence;
  let score = evidence + around + 0.5 * precision;
  if (parts.roles.has(el.role) || (parts.roles.has("button") && isButtonLike(el))) score += 0.5;
  else if ((parts.picture && isPicture(el)) || (parts.icon && isIcon(el))) score += 0.5;
  if (el.backgroundColor && parts.colours.has(el.backgroundColor)) score += 0.4;
  else if (el.textColor && parts.colours.has(el.textColor)) score += 0.2;
  if (parts.boxColour && el.boxColor === parts.boxColour) score += 0.3;
  if (parts.round && el.round) score += 0.3;
  if (query.actionType === "Type" && !TEXT_ENTRY_ROLES.has(el.role)) score -= 1;
  if (el.disabled) score -= 0.5;
  if (!el.inViewport) score -= 0.1;
  return { element: el, nameEvidence, evidence, score, neighbourInContext };
}

/** Ranks elements, best first; among equals, document order decides (deterministic). */
function rankElements(query: GroundingQuery, parts: DescriptionParts, elements: readonly InteractiveElement[]): ScoredElement[] {
  return elements.map((el) => scoreElement(el, parts, query)).sort((a, b) => b.score - a.score || a.element.index - b.element.index);
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function describe(el: InteractiveElement): string {
  const name = el.text || el.ariaLabel || el.label || el.title || el.alt || el.placeholder;
  return `<${el.tag}${el.className ? ` class="${el.className}"` : ""}>${name ? ` "${name.slice(0, 40)}"` : ""}`;
}

interface Choice {
  chosen?: ScoredElement;
  why: string;
  failed?: string;
}

/** The peers narrowed by the place and neighbours the description names (strict: a place that singles out none fails). */
function placeAmong(peers: ScoredElement[], parts: DescriptionParts, context: GroundingContext, strict: boolean) {
  return narrowByPlacement({
    items: peers,
    elementOf: (scored) => scored.element,
    neighbourInContext: (scored) => scored.neighbourInContext,
    parts,
    blocks: () => context.textBlocks?.() ?? Promise.resolve([]),
    allElements: context.elements,
    strict,
  });
}

/** Text path: the best-named elements, ties broken by look (in the score) and then by place (lenient). */
async function chooseByName(pool: ScoredElement[], parts: DescriptionParts, context: GroundingContext, basis: string): Promise<Choice> {
  const best = pool[0]!;
  const peers = pool.filter((scored) => scored.score >= best.score - TIE);
  const placed = await placeAmong(peers, parts, context, false);
  const chosen = placed.items[0] ?? best;
  const tie =
    peers.length > 1 ? `; ${peers.length} fit equally well${placed.notes.length ? `: ${placed.notes.join(", ")}` : ", the first in reading order"}` : "";
  return { chosen, why: `${basis} (evidence ${round(chosen.evidence)}) ${describe(chosen.element)}${tie}` };
}

/** Kind path: no words name it; the visible elements of the named kind, narrowed by look and place (strict). */
async function chooseByKind(
  ranked: ScoredElement[],
  parts: DescriptionParts,
  query: GroundingQuery,
  context: GroundingContext,
  requirePlace: boolean,
): Promise<Choice | undefined> {
  const named = namesAPlace(parts) || namesALook(parts);
  if (requirePlace && !named) return undefined;
  let pool = ranked.filter((scored) => fitsKind(scored.element, parts, query) && !scored.element.disabled);
  // What a person sees: uncovered elements in the viewport, when there are any.
  for (const visible of [(el: InteractiveElement) => el.topMost !== false, (el: InteractiveElement) => el.inViewport]) {
    const shown = pool.filter((scored) => visible(scored.element));
    if (shown.length > 0) pool = shown;
  }
  if (pool.length === 0) return undefined;
  const kind = parts.picture ? "photo/image" : parts.icon ? "icon" : query.actionType === "Type" ? "text field" : [...parts.roles].join("/");
  const best = pool[0]!;
  const peers = pool.filter((scored) => scored.score >= best.score - TIE);
  if (!named) {
    if (pool.length === 1) return { chosen: best, why: `no element's words name it; the only ${kind} on the page ${describe(best.element)}` };
    return undefined;
  }
  const placed = await placeAmong(peers, parts, context, true);
  const basis =
    `no element's words name it; by kind (${kind}: ${pool.length} visible` +
    `${peers.length < pool.length ? `, ${peers.length} with the look described` : ""})`;
  if (placed.failed) return { why: basis, failed: placed.failed };
  const chosen = placed.items[0];
  if (!chosen) return undefined;
  const rest = placed.items.length > 1 ? `; ${placed.items.length} remain, the first in reading order` : "";
  return { chosen, why: `${basis}${placed.notes.length ? `, ${placed.notes.join(", ")}` : ""}${rest} ${describe(chosen.element)}` };
}

export function createHeuristicGrounder(): Grounder {
  return {
    kind: "heuristic",
    promptHashes: { "heuristic-grounding-rules": HEURISTIC_RULES_VERSION },
    async locate(asked: GroundingQuery, context: GroundingContext): Promise<GroundingAnswer> {
      // A Type line without its text (the real dataset's): the text is read off the description, and the target is what remains.
      const typed = asked.actionType === "Type" ? typedTextOf(asked.description, asked.text) : undefined;
      const query: GroundingQuery = typed ? { ...asked, description: typed.target, text: typed.text } : asked;
      const parts = parseDescription(query.description);
      const ranked = rankElements(query, parts, context.elements);
      const text = query.actionType === "Type" ? { text: query.text ?? "" } : {};
      const answer = (choice: Choice): GroundingAnswer => {
        const chosen = choice.chosen!;
        const runner = ranked.find((scored) => scored !== chosen);
        return {
          index: chosen.element.index,
          ...text,
          method: "heuristic",
          score: round(chosen.score),
          ...(runner ? { runnerUp: { index: runner.element.index, score: round(runner.score) } } : {}),
          why: choice.why,
          exchanges: [],
        };
      };

      const byName = ranked.filter((scored) => scored.nameEvidence >= HEURISTIC_MIN_EVIDENCE);
      if (byName.length > 0) return answer(await chooseByName(byName, parts, context, "named by its own text, labels or icon"));
      // Quoted words that are on no element say the target is missing; kind and place must not stand in for them.
      const kindAllowed = namesAKind(parts, query) && parts.quoted.length === 0;
      let failed: Choice | undefined;
      if (kindAllowed) {
        const byKind = await chooseByKind(ranked, parts, query, context, true);
        if (byKind?.chosen) return answer(byKind);
        failed = byKind;
      }
      // Words of kind and place an element shows ("Top photos") name it only when nothing quoted is missing and no place rule refused.
      const byWeakWords = parts.quoted.length === 0 && !failed ? ranked.filter((scored) => scored.evidence >= HEURISTIC_MIN_EVIDENCE) : [];
      if (byWeakWords.length > 0) return answer(await chooseByName(byWeakWords, parts, context, "named by kind and place words it shows"));
      if (kindAllowed && !failed) {
        const sole = await chooseByKind(ranked, parts, query, context, false);
        if (sole?.chosen) return answer(sole);
      }
      const best = ranked[0];
      const runner = ranked[1];
      return {
        index: -1,
        method: "heuristic",
        ...(best ? { score: round(best.score) } : {}),
        ...(runner ? { runnerUp: { index: runner.element.index, score: round(runner.score) } } : {}),
        exchanges: [],
        reason:
          context.elements.length === 0
            ? "the page has no interactive elements"
            : failed?.failed
              ? `${failed.why}: ${failed.failed}`
              : "no element matches the description well enough " +
                `(best evidence ${round(Math.max(0, ...ranked.map((s) => s.evidence)))} < ${HEURISTIC_MIN_EVIDENCE})`,
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
