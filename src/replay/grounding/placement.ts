/**
 * Choosing among elements that fit a description equally well by where they are and
 * how big they are, as a person points at one of several alike things: "the large
 * photo", "the button under 'Total'", "at the right of a card", "in the bottom right
 * corner", "the third photo in the top row", "the second one". Each rule narrows the
 * candidates and says what it did, so the grounding record can say why it chose.
 */
import type { ElementBox, InteractiveElement } from "../../browser/element-index.ts";
import type { TextBlock } from "../../browser/text-blocks.ts";
import type { DescriptionParts, Place, Relation } from "./description-parts.ts";
import { normalizeText, stem, words } from "./description-text.ts";

/** How much larger (or smaller) by area the named one must be than the next, for "the large one" to single it out. */
export const SIZE_MARGIN = 1.5;

export interface Narrowed<T> {
  items: T[];
  /** What each applied rule did, in order. */
  notes: string[];
  /** A named rule found no fitting element (strict mode stops there). */
  failed?: string;
}

const centreX = (box: ElementBox): number => box.x + box.width / 2;
const centreY = (box: ElementBox): number => box.y + box.height / 2;
const area = (box: ElementBox): number => box.width * box.height;

function nth<T>(items: readonly T[], place: number): T | undefined {
  if (place === -1) return items[items.length - 1];
  if (place === -2) return items[Math.floor((items.length - 1) / 2)];
  return items[place];
}

function ordinalName(place: number): string {
  if (place === -1) return "last";
  if (place === -2) return "middle";
  const n = place + 1;
  const suffix = n % 10 === 1 && n !== 11 ? "st" : n % 10 === 2 && n !== 12 ? "nd" : n % 10 === 3 && n !== 13 ? "rd" : "th";
  return `${n}${suffix}`;
}

/** Groups boxes into rows (top to bottom), each row left to right. */
export function rowsOf<T>(items: readonly T[], boxOf: (item: T) => ElementBox): T[][] {
  const sorted = [...items].sort((a, b) => centreY(boxOf(a)) - centreY(boxOf(b)) || boxOf(a).x - boxOf(b).x);
  const rows: T[][] = [];
  for (const item of sorted) {
    const row = rows[rows.length - 1];
    const first = row?.[0];
    const box = boxOf(item);
    if (row && first !== undefined && Math.abs(centreY(box) - centreY(boxOf(first))) < Math.max(4, Math.min(boxOf(first).height, box.height) / 2)) {
      row.push(item);
    } else {
      rows.push([item]);
    }
  }
  return rows.map((row) => row.sort((a, b) => boxOf(a).x - boxOf(b).x));
}

/** Where some words stand on the page: text blocks and elements whose text is (or holds) the anchor, best match first. */
export function findAnchors(relation: Relation, blocks: readonly TextBlock[], elements: readonly InteractiveElement[]): ElementBox[] {
  const texts: Array<{ text: string; box: ElementBox }> = [...blocks, ...elements.map((el) => ({ text: el.text || el.ariaLabel || el.label, box: el.box }))];
  let best = 0;
  let anchors: ElementBox[] = [];
  for (const { text, box } of texts) {
    const normalized = normalizeText(text);
    if (!normalized) continue;
    let fit = 0;
    if (relation.quoted?.normalized) {
      if (normalized === relation.quoted.normalized) fit = 3;
      else if (` ${normalized} `.includes(` ${relation.quoted.normalized} `)) fit = 2 + relation.quoted.normalized.length / normalized.length;
    } else if (relation.words.length > 0) {
      const own = new Set(words(text).map(stem));
      if (relation.words.every((word) => own.has(word))) fit = 1 + relation.words.length / own.size;
    }
    if (fit > best + 1e-9) {
      best = fit;
      anchors = [box];
    } else if (fit > 0 && Math.abs(fit - best) < 1e-9) {
      anchors.push(box);
    }
  }
  return anchors;
}

/** How far `box` is from `anchor` in the relation's direction, or undefined when it is not on that side. */
export function relationDistance(kind: Relation["kind"], box: ElementBox, anchor: ElementBox): number | undefined {
  const gapX = Math.max(0, anchor.x - (box.x + box.width), box.x - (anchor.x + anchor.width));
  const gapY = Math.max(0, anchor.y - (box.y + box.height), box.y - (anchor.y + anchor.height));
  switch (kind) {
    case "below":
      return centreY(box) > anchor.y + anchor.height - 2 ? gapY + 2 * gapX : undefined;
    case "above":
      return centreY(box) < anchor.y + 2 ? gapY + 2 * gapX : undefined;
    case "rightOf":
      return centreX(box) > anchor.x + anchor.width - 2 ? gapX + 2 * gapY : undefined;
    case "leftOf":
      return centreX(box) < anchor.x + 2 ? gapX + 2 * gapY : undefined;
    case "near":
      return Math.hypot(gapX, gapY);
  }
}

function placeName(place: Place): string {
  return [place.vertical, place.horizontal].filter(Boolean).join(" ");
}

/** True when the box's centre lies in the named part of its container. */
function inPartOf(place: Place, box: ElementBox, container: ElementBox): boolean {
  const rx = container.width > 0 ? (centreX(box) - container.x) / container.width : 0.5;
  const ry = container.height > 0 ? (centreY(box) - container.y) / container.height : 0.5;
  const vertical = place.vertical === "top" ? ry < 0.5 : place.vertical === "bottom" ? ry > 0.5 : place.vertical === "middle" ? ry > 0.25 && ry < 0.75 : true;
  const horizontal =
    place.horizontal === "left" ? rx < 0.5 : place.horizontal === "right" ? rx > 0.5 : place.horizontal === "middle" ? rx > 0.25 && rx < 0.75 : true;
  return vertical && horizontal;
}

/** How far towards the named place on the page a box lies (larger is further). */
function towards(place: Place, box: ElementBox): number {
  let value = 0;
  if (place.vertical === "top") value -= centreY(box);
  if (place.vertical === "bottom") value += centreY(box);
  if (place.horizontal === "left") value -= centreX(box);
  if (place.horizontal === "right") value += centreX(box);
  return value;
}

export interface PlacementInput<T> {
  items: T[];
  elementOf: (item: T) => InteractiveElement;
  /** How much of the neighbour's words its surroundings hold: decides when the neighbour cannot be placed on the page. */
  neighbourInContext: (item: T) => number;
  parts: DescriptionParts;
  /** The words anchors are looked for in (text blocks), read only when a relation is named. */
  blocks: () => Promise<readonly TextBlock[]>;
  allElements: readonly InteractiveElement[];
  /** Strict: a rule that finds nothing, or a size that does not single one out, fails the choice. */
  strict: boolean;
}

/**
 * Narrows `items` by the description's size, neighbour, place in its container, place on
 * the page, and grid place or order, in that order. Lenient mode skips a rule that would
 * leave nothing; strict mode stops and reports it.
 */
export async function narrowByPlacement<T>(input: PlacementInput<T>): Promise<Narrowed<T>> {
  const { parts, elementOf, strict } = input;
  let items = [...input.items];
  const notes: string[] = [];
  const box = (item: T): ElementBox => elementOf(item).box;
  const stop = (failed: string): Narrowed<T> => ({ items, notes, failed });

  if (parts.size && items.length > 1) {
    const bySize = [...items].sort((a, b) => (parts.size === "large" ? area(box(b)) - area(box(a)) : area(box(a)) - area(box(b))));
    const [first, second] = [area(box(bySize[0]!)), area(box(bySize[1]!))];
    const clear = parts.size === "large" ? first >= SIZE_MARGIN * second : first * SIZE_MARGIN <= second;
    if (clear) {
      items = [bySize[0]!];
      notes.push(`the ${parts.size === "large" ? "largest" : "smallest"} of ${bySize.length} by area`);
    } else if (strict) {
      return stop(`'${parts.size}' does not single one out: the two ${parts.size === "large" ? "largest" : "smallest"} are about the same size`);
    }
  }

  const relation = parts.relation;
  if (relation && items.length > 1) {
    const anchors = findAnchors(relation, await input.blocks(), input.allElements);
    const byContext = (): void => {
      const most = Math.max(...items.map(input.neighbourInContext));
      if (most <= 0) return;
      items = items.filter((item) => input.neighbourInContext(item) === most);
      notes.push(`'${relation.phrase}': the one whose card or row holds those words`);
    };
    if (anchors.length === 0) {
      notes.push(`'${relation.phrase}': those words are not placed on the page`);
      byContext();
    } else {
      const distances = items
        .map((item) => ({ item, distance: Math.min(...anchors.map((anchor) => relationDistance(relation.kind, box(item), anchor) ?? Infinity)) }))
        .filter((entry) => Number.isFinite(entry.distance))
        .sort((a, b) => a.distance - b.distance);
      if (distances.length > 0) {
        items = [distances[0]!.item];
        notes.push(`'${relation.phrase}': the nearest on that side of the words (${Math.round(distances[0]!.distance)} px)`);
      } else if (strict) {
        return stop(`'${relation.phrase}': no candidate stands on that side of those words`);
      } else {
        notes.push(`'${relation.phrase}': no candidate on that side`);
        byContext();
      }
    }
  }

  const inContainer = parts.placeInContainer;
  if (inContainer && items.length > 1) {
    const inPart = items.filter((item) => {
      const container = elementOf(item).contextBox;
      return container !== undefined && inPartOf(inContainer, box(item), container);
    });
    if (inPart.length > 0) {
      items = inPart;
      notes.push(`at the ${placeName(inContainer)} of its container (${inPart.length} such)`);
    } else if (strict) {
      return stop(`nothing stands at the ${placeName(inContainer)} of its container`);
    }
  }

  const place = parts.place;
  if (place && items.length > 1 && parts.row === undefined && parts.column === undefined && parts.itemOrdinal === undefined) {
    const ordered = [...items].sort((a, b) => towards(place, box(b)) - towards(place, box(a)));
    items = [ordered[0]!];
    notes.push(`the one furthest to the ${placeName(place)} of the page`);
  }

  if ((parts.row !== undefined || parts.column !== undefined) && items.length > 1) {
    const rows = rowsOf(items, box);
    let pool = items;
    if (parts.row !== undefined) {
      pool = nth(rows, parts.row) ?? [];
      notes.push(`row ${ordinalName(parts.row)} of ${rows.length}`);
    }
    if (parts.column !== undefined) {
      const column = parts.column;
      pool = pool.filter((item) => nth(rows.find((row) => row.includes(item)) ?? [], column) === item);
      notes.push(`column ${ordinalName(column)}`);
    }
    const sorted = [...pool].sort((a, b) => box(a).x - box(b).x);
    const chosen = parts.itemOrdinal !== undefined ? nth(sorted, parts.itemOrdinal) : sorted[0];
    if (parts.itemOrdinal !== undefined) notes.push(`${ordinalName(parts.itemOrdinal)} from the left of ${sorted.length}`);
    if (chosen !== undefined) items = [chosen];
    else if (strict) return stop("the grid has no element at that place");
  } else if (parts.itemOrdinal !== undefined && items.length > 1) {
    const inOrder = [...items].sort((a, b) => elementOf(a).index - elementOf(b).index);
    const chosen = nth(inOrder, parts.itemOrdinal);
    if (chosen !== undefined) {
      items = [chosen];
      notes.push(`the ${ordinalName(parts.itemOrdinal)} of ${inOrder.length} in reading order`);
    } else if (strict) {
      return stop(`there are only ${inOrder.length}, no ${ordinalName(parts.itemOrdinal)}`);
    }
  }
  return { items, notes };
}
