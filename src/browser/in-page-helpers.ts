/**
 * Helpers that run inside the page, shared by the page scripts of the element index and
 * the click planner. Page scripts travel as source text (page-scripts.ts), so these cannot
 * be imported there: their source, IN_PAGE_HELPERS, is placed in front of every page
 * script by page-scripts.ts, and a page script names them
 * through the `declare function` lines of its own module.
 */

/** The parent in the rendered (flat) tree: a slotted element's slot, a shadow root's host. */
export function composedParent(node: Element): Element | null {
  if (node.assignedSlot) return node.assignedSlot;
  if (node.parentElement) return node.parentElement;
  return node.parentNode instanceof ShadowRoot ? node.parentNode.host : null;
}

/** Whether `node` is `container` or inside it in the rendered tree (through slots and shadow roots). */
export function isWithin(node: Element, container: Element): boolean {
  for (let current: Element | null = node; current; current = composedParent(current)) if (current === container) return true;
  return false;
}

/** The element a click at (x, y) reaches, inside open shadow roots too (document.elementFromPoint stops at the host). */
export function deepElementFromPoint(x: number, y: number): Element | null {
  let hit = document.elementFromPoint(x, y);
  for (let depth = 0; hit?.shadowRoot && depth < 32; depth++) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  return hit;
}

/** The helpers' source, as function declarations, for the front of a page script. */
export const IN_PAGE_HELPERS = [composedParent, isWithin, deepElementFromPoint].map((helper) => helper.toString()).join("\n");
