/**
 * What icon-only controls are called. A control that shows a glyph instead of words is
 * named by a person after what it does ("the close button", "the delete icon") or after
 * what it shows ("the trash can", "the ×", "the hamburger"), and by the page after either
 * (`class="btn-close"`, `<i class="fa-trash">`, `<use href="#icon-x">`, `aria-label="Dismiss"`).
 * Each entry below is one such meaning with the words and symbols that name it, so a
 * description word and an element word that share a meaning match. The entries are the
 * common icon vocabulary of icon fonts and UI kits, not the words of any one page.
 */

import { stem } from "./description-text.ts";

const MEANINGS: Record<string, readonly string[]> = {
  close: ["close", "dismiss", "x", "times", "cross", "xmark", "×", "✕", "✖", "╳", "⨯"],
  delete: ["delete", "remove", "trash", "bin", "garbage", "rubbish", "wastebasket", "erase", "discard", "🗑"],
  menu: ["menu", "hamburger", "burger", "bars", "navicon", "☰", "≡"],
  more: ["more", "ellipsis", "dots", "kebab", "meatball", "overflow", "…", "⋮", "⋯"],
  next: ["next", "forward", "›", "»", "→", "❯", "⟩", "▶"],
  previous: ["previous", "prev", "back", "‹", "«", "←", "❮", "⟨", "◀"],
  add: ["add", "plus", "new", "create", "insert", "+", "＋", "➕"],
  minus: ["minus", "subtract", "decrease", "decrement", "remove", "−", "-", "➖"],
  edit: ["edit", "pencil", "pen", "modify", "rename", "✎", "✏", "✐"],
  settings: ["settings", "setting", "gear", "cog", "preferences", "options", "config", "⚙"],
  search: ["search", "magnifier", "magnifying", "loupe", "find", "🔍", "🔎"],
  like: ["like", "heart", "love", "favourite", "favorite", "fav", "♥", "❤", "♡"],
  star: ["star", "favourite", "favorite", "rate", "rating", "★", "☆"],
  share: ["share"],
  download: ["download"],
  upload: ["upload"],
  refresh: ["refresh", "reload", "sync", "retry", "↻", "⟳", "🔄"],
  undo: ["undo", "↶", "↺"],
  home: ["home", "house", "⌂", "🏠"],
  user: ["user", "profile", "account", "person", "avatar", "👤"],
  cart: ["cart", "basket", "bag", "trolley", "🛒"],
  notification: ["bell", "notification", "alert", "🔔"],
  info: ["info", "information", "ℹ"],
  help: ["help", "question", "?", "❓"],
  confirm: ["check", "tick", "done", "confirm", "ok", "checkmark", "✓", "✔"],
  copy: ["copy", "clipboard", "duplicate"],
  filter: ["filter", "funnel"],
  sort: ["sort"],
  mail: ["mail", "email", "envelope", "✉"],
  phone: ["phone", "call", "telephone", "☎"],
  calendar: ["calendar", "date"],
  lock: ["lock", "padlock", "🔒"],
  view: ["eye", "view", "visibility", "reveal", "👁"],
  sound: ["volume", "sound", "speaker", "audio", "mute", "unmute", "🔊", "🔇"],
  play: ["play", "▶", "►"],
  pause: ["pause", "⏸"],
  stop: ["stop", "⏹", "■"],
  fullscreen: ["fullscreen", "maximize", "maximise", "enlarge", "⛶"],
  expand: ["expand", "dropdown", "▼", "▾", "⌄"],
  collapse: ["collapse", "▲", "▴", "⌃"],
  print: ["print", "printer", "🖨"],
  save: ["save", "floppy", "💾"],
  attach: ["attach", "attachment", "paperclip", "📎"],
  theme: ["theme", "moon", "sun", "☀", "☾", "🌙"],
  location: ["location", "map", "pin", "marker", "📍"],
};

/** Words whose direction part names the meaning: "chevron-right", "arrow_back", "angle-down". */
const DIRECTION_ICONS = /\b(?:chevron|arrow|angle|caret|triangle|nav)[-_ ]?(right|forward|end|left|back|start|down|up)\b/g;
const DIRECTION_MEANING: Record<string, string> = {
  right: "next",
  forward: "next",
  end: "next",
  left: "previous",
  back: "previous",
  start: "previous",
  down: "expand",
  up: "collapse",
};

/** Each name, and its stem ("dots" → "dot"), to the meanings it names. */
const BY_WORD = new Map<string, string[]>();
for (const [meaning, names] of Object.entries(MEANINGS)) {
  for (const name of new Set(names.flatMap((name) => [name, stem(name)]))) BY_WORD.set(name, [...(BY_WORD.get(name) ?? []), meaning]);
}

/** The meanings one word or symbol names ("trash" → delete; "×" → close; "settings" or its stem "setting"); empty when it names none. */
export function meaningsOfWord(word: string): readonly string[] {
  const lower = word.toLowerCase();
  return BY_WORD.get(lower) ?? BY_WORD.get(stem(lower)) ?? [];
}

/** The meanings a text names: each of its words and symbols, and direction icons ("chevron-right" → next). */
export function meaningsOfText(text: string): Set<string> {
  const lower = text.toLowerCase();
  const found = new Set<string>();
  for (const match of lower.matchAll(DIRECTION_ICONS)) {
    const meaning = DIRECTION_MEANING[match[1] ?? ""];
    if (meaning) found.add(meaning);
  }
  for (const word of lower.match(/[\p{L}\p{N}]+/gu) ?? []) for (const meaning of meaningsOfWord(word)) found.add(meaning);
  // Symbols one by one (an emoji is one character to Array.from, two to split("")).
  for (const symbol of Array.from(lower.replace(/[\p{L}\p{N}\s]+/gu, ""))) for (const meaning of meaningsOfWord(symbol)) found.add(meaning);
  return found;
}
