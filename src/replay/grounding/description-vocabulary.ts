/**
 * The words and patterns a description of a click target is read with
 * (description-parts.ts takes a description apart with them): kinds of control, picture
 * and colour words, sizes, the nouns for what a control sits in, orders, places on the
 * page and the phrases that relate a target to words beside it. Written in general
 * terms, not from any suite's wording.
 */
import { STOP_WORDS } from "./description-text.ts";

/** How a target stands relative to some words on the page. */
export type RelationKind = "below" | "above" | "rightOf" | "leftOf" | "near";

export const ROLE_WORDS: Record<string, readonly string[]> = {
  button: ["button"],
  btn: ["button"],
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
/** Words that only say what kind of control it is (never part of its name). */
export const KIND_ONLY_WORDS = new Set(["button", "btn", "input", "field", "link", "hyperlink", "box", "textbox", "textarea", "searchbox", "checkbox", "icon"]);
/** Words that name a picture: an <img>, a CSS background image. */
export const PICTURE_WORDS = new Set(["photo", "photograph", "picture", "image", "img", "pic", "thumbnail", "thumb", "thumbnail", "snapshot"]);
export const COLOUR_WORDS: Record<string, string> = {
  black: "black",
  white: "white",
  gray: "gray",
  grey: "gray",
  silver: "gray",
  red: "red",
  orange: "orange",
  yellow: "yellow",
  gold: "yellow",
  golden: "yellow",
  green: "green",
  teal: "teal",
  cyan: "teal",
  turquoise: "teal",
  blue: "blue",
  navy: "blue",
  purple: "purple",
  violet: "purple",
  pink: "pink",
  magenta: "pink",
  brown: "brown",
};
export const SIZE_WORDS: Record<string, "large" | "small"> = {
  large: "large",
  larger: "large",
  largest: "large",
  big: "large",
  bigger: "large",
  biggest: "large",
  huge: "large",
  enlarged: "large",
  small: "small",
  smaller: "small",
  smallest: "small",
  little: "small",
  tiny: "small",
};
export const ROUND_WORDS = new Set(["round", "rounded", "circular", "circle"]);
/** Nouns for what a control sits in: "in the grey box", "at the right of a card". */
export const CONTAINER_NOUNS = [
  "box",
  "boxes",
  "panel",
  "card",
  "cards",
  "dialog",
  "modal",
  "popup",
  "popover",
  "window",
  "sidebar",
  "toolbar",
  "bar",
  "header",
  "footer",
  "banner",
  "section",
  "area",
  "form",
  "list",
  "item",
  "tile",
  "table",
  "grid",
  "board",
  "keypad",
  "pad",
  "tray",
  "strip",
  "container",
  "frame",
  "drawer",
  "sheet",
  "toast",
  "message",
  "block",
  "column",
  "region",
];
export const PAGE_NOUNS = /^(?:page|screen|window|viewport|display)$/;
/**
 * Shared stop words that name a target once the phrases of place are read ("the next
 * arrow", "Click Next"): "next to X" was taken as a neighbour before words are read.
 */
const NAMING_WORDS = new Set(["next"]);
export const isStopWord = (word: string): boolean => STOP_WORDS.has(word) && !NAMING_WORDS.has(word);
/** Nouns for words on the page ("under the Quantity label"): the anchor is the words, not these. */
export const TEXT_NOUNS = new Set(["label", "heading", "title", "text", "caption", "line", "word", "words", "name", "header", "headline", "sentence"]);

const ORDINAL_PLACE: Record<string, number> = {
  first: 0,
  second: 1,
  third: 2,
  fourth: 3,
  fifth: 4,
  sixth: 5,
  seventh: 6,
  eighth: 7,
  ninth: 8,
  tenth: 9,
  last: -1,
  top: 0,
  bottom: -1,
  middle: -2,
  centre: -2,
  center: -2,
};
const ORDINAL = "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|\\d{1,2}(?:st|nd|rd|th)";
/** "the middle picture": an order too, where no place phrase took the word. */
export const ITEM_ORDINAL_WORDS = new RegExp(`\\b(${ORDINAL}|middle|centre|center)\\b`);
export const GRID_POSITION = new RegExp(`\\b(${ORDINAL}|top|middle|bottom|centre|center)\\s+(row|column)\\b`, "g");
/** A quoted string stands in the working text as «n». */
export const QUOTE_TOKEN = /«(\d+)»/g;
/** The end of a noun phrase: punctuation, or a word that starts another part of the sentence. */
const PHRASE_END = "(?=$|[,;.:!?()]|\\s+(?:and|or|but|then|to|which|that|where|while|when|so|in|on|at|inside|within|near|next|beside|under|below|above)\\b)";
const SIDE = "(top|bottom|upper|lower|left|right|middle|centre|center)";
export const SIDE_OF = new RegExp(
  `\\b(?:at|on|to|in|towards?)\\s+the\\s+(?:very\\s+|far\\s+)?${SIDE}(?:[\\s-]+${SIDE})?(?:[\\s-]+hand)?(?:\\s+(?:corner|side|edge|end|part|half))?` +
    `\\s+of\\s+((?:the|a|an|each|every|its|this)\\s+)?(.+?)${PHRASE_END}`,
  "g",
);
export const PAGE_PLACE = new RegExp(
  `\\b(?:at|on|to|in|towards?|near)\\s+the\\s+(?:very\\s+|far\\s+)?${SIDE}(?:[\\s-]+${SIDE})?(?:[\\s-]+hand)?(?:\\s+(?:corner|side|edge|end|part|half))?` +
    `\\b(?!\\s+of\\b|[\\s-]+(?:row|column)\\b)`,
  "g",
);
export const RELATIONS: Array<[RelationKind, string]> = [
  ["below", "under(?:neath)?|below|beneath"],
  ["above", "above|on\\s+top\\s+of"],
  ["rightOf", "(?:to\\s+the\\s+)?right\\s+of"],
  ["leftOf", "(?:to\\s+the\\s+)?left\\s+of"],
  ["near", "next\\s+to|beside|alongside|near|by\\s+the\\s+side\\s+of"],
];
const RELATION_WORDS = RELATIONS.map(([, words]) => words).join("|");
export const RELATION = new RegExp(`\\b(${RELATION_WORDS})\\s+(?:the\\s+|a\\s+|an\\s+|its\\s+)?(.+?)${PHRASE_END}`, "g");
export const CONTAINMENT = new RegExp(
  `\\b(?:in|inside|within|on|of)\\s+(?:the|a|an|its|each|every|this)\\s+` +
    `((?:[\\w'-]+|«\\d+»)(?:\\s+(?:[\\w'/-]+|«\\d+»)){0,3}?)\\s+(${CONTAINER_NOUNS.join("|")})\\b`,
  "g",
);

export function ordinalPlace(word: string): number | undefined {
  const known = ORDINAL_PLACE[word];
  if (known !== undefined) return known;
  const numeric = /^(\d{1,2})(?:st|nd|rd|th)$/.exec(word);
  return numeric ? Number(numeric[1]) - 1 : undefined;
}
