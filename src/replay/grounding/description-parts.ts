/**
 * What a description of a click target says, taken apart the way a person reads it:
 * the text it quotes and the words naming the target; the kind of element (a button, a
 * photo, an icon); what it looks like (colour, round, large or small, the colour of the
 * box it sits in); and where it is: a place in a grid ("the third photo in the top row"),
 * an order ("the second", "the last"), a place on the page ("in the bottom right
 * corner"), a place inside its card ("at the right of a card"), or a place next to some
 * words on the page ("the button under 'Total'", "the icon to the left of the price").
 *
 * Words that say where or what kind are not names: "top" in "the top row" must not make
 * a "Top stories" link the target. Such words are kept apart (`weakWords`) and only count
 * a little when they also stand on the element.
 */

import { normalizeText, quotedSpansOf, STOP_WORDS, stem, words } from "./description-text.ts";
import {
  COLOUR_WORDS,
  CONTAINER_NOUNS,
  CONTAINMENT,
  GRID_POSITION,
  ITEM_ORDINAL_WORDS,
  isStopWord,
  KIND_ONLY_WORDS,
  ordinalPlace,
  PAGE_NOUNS,
  PAGE_PLACE,
  PICTURE_WORDS,
  QUOTE_TOKEN,
  RELATION,
  RELATIONS,
  type RelationKind,
  ROLE_WORDS,
  ROUND_WORDS,
  SIDE_OF,
  SIZE_WORDS,
  TEXT_NOUNS,
} from "./description-vocabulary.ts";

export interface QuotedPart {
  raw: string;
  normalized: string;
}

export type VerticalPlace = "top" | "bottom" | "middle";
export type HorizontalPlace = "left" | "right" | "middle";
export interface Place {
  vertical?: VerticalPlace;
  horizontal?: HorizontalPlace;
}

/** Where the target stands relative to some words on the page. */
export interface Relation {
  kind: RelationKind;
  /** The words it stands by: a quoted string, else the anchor's content words (stemmed). */
  quoted?: QuotedPart;
  words: string[];
  /** The phrase as written, for the record. */
  phrase: string;
}

export interface DescriptionParts {
  /** Quoted strings naming the target itself. */
  quoted: QuotedPart[];
  /** Words naming the target (stemmed, stop words and kind words out). */
  contentWords: string[];
  /** Words that say where, how big or what kind (stemmed): a little evidence when the element shows them too. */
  weakWords: string[];
  /** Adjacent content words ("second card"): word order tells "the second card in the third row" from the reverse. */
  bigrams: Set<string>;
  /** Words and quotes of what the target sits in ("in the Filters panel", "at the top of the 'Recipes' list"): read against its surroundings. */
  contextWords: string[];
  contextQuotes: QuotedPart[];
  /** Element roles the description names ("button", "field", "tab"). */
  roles: Set<string>;
  /** It names a picture: photo, image, picture, thumbnail. */
  picture: boolean;
  /** It names an icon. */
  icon: boolean;
  colours: Set<string>;
  round: boolean;
  size?: "large" | "small";
  /** "the second …": place among equals, in reading order (-1 last, -2 middle). */
  itemOrdinal?: number;
  row?: number;
  column?: number;
  relation?: Relation;
  /** A place on the page: "in the bottom right corner", "at the top". */
  place?: Place;
  /** A place inside its own card, row or box: "at the right of a card", "at the bottom of the form". */
  placeInContainer?: Place;
  /** The colour of the box it sits in: "inside the grey box". */
  boxColour?: string;
}

function sideToPlace(first: string | undefined, second: string | undefined): Place {
  const place: Place = {};
  for (const side of [first, second]) {
    if (side === "top" || side === "upper") place.vertical = "top";
    else if (side === "bottom" || side === "lower") place.vertical = "bottom";
    else if (side === "left" || side === "right") place.horizontal = side;
    else if (side === "middle" || side === "centre" || side === "center") {
      if (place.vertical) place.horizontal = "middle";
      else place.vertical = "middle";
    }
  }
  return place;
}

function bigramsOf(sequence: readonly string[]): Set<string> {
  const pairs = new Set<string>();
  for (let index = 1; index < sequence.length; index++) pairs.add(`${sequence[index - 1]} ${sequence[index]}`);
  return pairs;
}

/** Content words of a text in order: stop words out, stemmed. */
export function contentSequence(text: string): string[] {
  return words(text)
    .filter((word) => !isStopWord(word))
    .map(stem);
}

export { bigramsOf };

/** Takes a description apart (see the file's comment). Deterministic; no page needed. */
export function parseDescription(description: string): DescriptionParts {
  // Quoted strings first, each replaced by «n» so the phrases around them can be read.
  const spans = [...quotedSpansOf(description)].sort((a, b) => a.start - b.start || b.end - a.end);
  const quotes: QuotedPart[] = [];
  let working = "";
  let cursor = 0;
  for (const span of spans) {
    if (span.start < cursor) continue;
    working += `${description.slice(cursor, span.start)} «${quotes.length}» `;
    quotes.push({ raw: span.text.toLowerCase(), normalized: normalizeText(span.text) });
    cursor = span.end;
  }
  working = `${working}${description.slice(cursor)}`.toLowerCase().replace(/\s+/g, " ");

  const parts: DescriptionParts = {
    quoted: [],
    contentWords: [],
    weakWords: [],
    bigrams: new Set(),
    contextWords: [],
    contextQuotes: [],
    roles: new Set(),
    picture: false,
    icon: false,
    colours: new Set(),
    round: false,
  };
  const contextQuoteIds = new Set<number>();
  const weak: string[] = [];
  /** Place phrases as word pairs: an element that names itself by its place ("third card in the top row") shows them. */
  const phrasePairs: string[] = [];
  /** Phrases read for where the target is are taken out of the text its name is read from. */
  /** `read` answers false to leave the phrase, else the part of it that names an anchor (kept out of the weak words). */
  const consume = (pattern: RegExp, read: (match: RegExpExecArray) => false | { anchor: string }): void => {
    working = working.replace(pattern, (...args) => {
      const match = args.slice(0, -2) as unknown as RegExpExecArray;
      const whole = String(args[0]);
      const taken = read(match);
      if (taken === false) return whole;
      const own = (taken.anchor ? whole.replace(taken.anchor, " ") : whole).replace(QUOTE_TOKEN, " ");
      weak.push(...words(own));
      phrasePairs.push(...bigramsOf(contentSequence(whole.replace(QUOTE_TOKEN, " "))));
      return " ";
    });
  };
  const readAnchor = (phrase: string): { words: string[]; quoteIds: number[]; colours: string[] } => {
    const quoteIds = Array.from(phrase.matchAll(QUOTE_TOKEN), (match) => Number(match[1]));
    const plain = words(phrase.replace(QUOTE_TOKEN, " "));
    const named = (word: string): boolean =>
      !STOP_WORDS.has(word) && !KIND_ONLY_WORDS.has(word) && !COLOUR_WORDS[word] && ordinalPlace(word) === undefined && !TEXT_NOUNS.has(word);
    return {
      words: plain.filter((word) => named(word) && !CONTAINER_NOUNS.includes(word)).map(stem),
      quoteIds,
      colours: plain.filter((word) => COLOUR_WORDS[word]).map((word) => COLOUR_WORDS[word]!),
    };
  };
  /** Quotes naming a neighbour: where the target stands, read by geometry only (its own card may be elsewhere: "the + above 'Size'"). */
  const neighbourQuoteIds = new Set<number>();
  const toNeighbour = (anchor: { quoteIds: number[] }): void => {
    for (const id of anchor.quoteIds) neighbourQuoteIds.add(id);
  };
  const toContext = (anchor: { words: string[]; quoteIds: number[] }): void => {
    parts.contextWords.push(...anchor.words);
    for (const id of anchor.quoteIds) contextQuoteIds.add(id);
  };

  consume(new RegExp(GRID_POSITION.source, "g"), (match) => {
    const place = ordinalPlace(match[1] ?? "");
    if (match[2] === "row") parts.row = place;
    else parts.column = place;
    return { anchor: "" };
  });
  // An order anywhere but in a grid place ("the Delete button of the second item", "the round button of the third card").
  const order = ITEM_ORDINAL_WORDS.exec(
    working.replace(QUOTE_TOKEN, " ").replace(/\b(?:at|in|on|to|towards?|near)\s+the\s+(?:very\s+)?(?:middle|centre|center)\b/g, " "),
  );
  if (order?.[1]) parts.itemOrdinal = ordinalPlace(order[1]);
  consume(SIDE_OF, (match) => {
    const place = sideToPlace(match[1], match[2]);
    const object = (match[4] ?? "").trim();
    const lastWord = object.split(" ").pop() ?? "";
    if (PAGE_NOUNS.test(lastWord)) {
      parts.place = place;
      return { anchor: "" };
    }
    const anchor = readAnchor(object);
    const isContainer = CONTAINER_NOUNS.includes(lastWord) || CONTAINER_NOUNS.includes(stem(lastWord));
    if (!isContainer && place.horizontal && !place.vertical && place.horizontal !== "middle" && (anchor.words.length > 0 || anchor.quoteIds.length > 0)) {
      // "to the right of 'Save'": beside some words on the page.
      const quoted = anchor.quoteIds[0] !== undefined ? quotes[anchor.quoteIds[0]] : undefined;
      parts.relation = { kind: place.horizontal === "right" ? "rightOf" : "leftOf", words: anchor.words, phrase: match[0], ...(quoted ? { quoted } : {}) };
      toNeighbour(anchor);
    } else {
      parts.placeInContainer = place;
      if (anchor.colours[0]) parts.boxColour = anchor.colours[0];
      toContext(anchor);
    }
    return { anchor: object };
  });
  consume(RELATION, (match) => {
    const said = (match[1] ?? "").replace(/\s+/g, " ");
    const kind = RELATIONS.find(([, pattern]) => new RegExp(`^(?:${pattern})$`).test(said))?.[0] ?? "near";
    const anchor = readAnchor(match[2] ?? "");
    if (anchor.words.length === 0 && anchor.quoteIds.length === 0) return false;
    const quoted = anchor.quoteIds[0] !== undefined ? quotes[anchor.quoteIds[0]] : undefined;
    parts.relation ??= { kind, words: anchor.words, phrase: match[0].trim(), ...(quoted ? { quoted } : {}) };
    toNeighbour(anchor);
    return { anchor: match[2] ?? "" };
  });
  consume(CONTAINMENT, (match) => {
    const anchor = readAnchor(`${match[1] ?? ""}`);
    if (anchor.colours[0]) parts.boxColour = anchor.colours[0];
    toContext(anchor);
    return { anchor: match[1] ?? "" };
  });
  consume(PAGE_PLACE, (match) => {
    parts.place = sideToPlace(match[1], match[2]);
    return { anchor: "" };
  });

  parts.quoted = quotes.filter((_, id) => !contextQuoteIds.has(id) && !neighbourQuoteIds.has(id));
  parts.contextQuotes = quotes.filter((_, id) => contextQuoteIds.has(id));

  const quotedWords = new Set(quotes.flatMap((quote) => quote.normalized.split(" ")));
  const sequence: string[] = [];
  for (const word of words(working.replace(QUOTE_TOKEN, " "))) {
    const roleKinds = ROLE_WORDS[word] ?? ROLE_WORDS[stem(word)];
    if (roleKinds) for (const role of roleKinds) parts.roles.add(role);
    if (PICTURE_WORDS.has(word) || PICTURE_WORDS.has(stem(word))) {
      parts.picture = true;
      weak.push(word);
      continue;
    }
    if (word === "icon" || word === "icons" || word === "glyph" || word === "symbol") parts.icon = true;
    if (isStopWord(word)) continue;
    const colour = COLOUR_WORDS[word];
    if (colour && !quotedWords.has(word)) {
      parts.colours.add(colour);
      continue;
    }
    if (ROUND_WORDS.has(word)) {
      parts.round = true;
      weak.push(word);
      continue;
    }
    const size = SIZE_WORDS[word];
    if (size) {
      parts.size = size;
      weak.push(word);
      sequence.push(stem(word));
      continue;
    }
    if (ITEM_ORDINAL_WORDS.test(word)) {
      weak.push(word);
      sequence.push(stem(word));
      continue;
    }
    // Generic control words only say what kind of element it is; words like "menu" or "tab" are also content.
    if (KIND_ONLY_WORDS.has(word)) continue;
    sequence.push(stem(word));
    parts.contentWords.push(stem(word));
  }
  parts.contentWords = [...new Set(parts.contentWords)];
  parts.weakWords = [...new Set(weak.filter((word) => !STOP_WORDS.has(word)).map(stem))].filter((word) => !parts.contentWords.includes(word));
  parts.contextWords = [...new Set(parts.contextWords)];
  parts.bigrams = new Set([...bigramsOf(sequence), ...phrasePairs]);
  return parts;
}

/** The parts that say which one among several of a kind (grid place, order, size, place, neighbour, look). */
export function namesAPlace(parts: DescriptionParts): boolean {
  return (
    parts.itemOrdinal !== undefined ||
    parts.row !== undefined ||
    parts.column !== undefined ||
    parts.size !== undefined ||
    parts.relation !== undefined ||
    parts.place !== undefined ||
    parts.placeInContainer !== undefined
  );
}

/** The parts that say what it looks like. */
export function namesALook(parts: DescriptionParts): boolean {
  return parts.colours.size > 0 || parts.round || parts.boxColour !== undefined;
}
