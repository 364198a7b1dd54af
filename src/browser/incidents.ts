/**
 * What an untrusted page did that the host stopped, dismissed or noticed: the
 * evidence a result file carries next to its score. Each kind is capped so a page
 * logging errors in a loop cannot fill memory; counts stay exact past the cap.
 */
export const PAGE_INCIDENT_KINDS = [
  "blocked-request",
  /** A request to the page's own server that failed (404 for a missing asset, ...). */
  "http-error",
  "dialog",
  "popup",
  "page-error",
  "console-error",
  "crash",
  "timeout",
  /** The main frame ended up somewhere other than the page's own server (e.g. a blocked external link's error page). */
  "navigation",
] as const;

export type PageIncidentKind = (typeof PAGE_INCIDENT_KINDS)[number];

export interface PageIncident {
  kind: PageIncidentKind;
  detail: string;
  /** Milliseconds since the page was opened. */
  atMs: number;
}

const MAX_DETAIL_CHARS = 500;

function shorten(text: string): string {
  return text.length <= MAX_DETAIL_CHARS ? text : `${text.slice(0, MAX_DETAIL_CHARS)}… (${text.length} chars)`;
}

export class IncidentLog {
  readonly incidents: PageIncident[] = [];
  readonly counts: Record<PageIncidentKind, number>;
  private readonly startedAt: number;
  private readonly maxPerKind: number;

  constructor(maxPerKind: number, startedAt = Date.now()) {
    this.maxPerKind = maxPerKind;
    this.startedAt = startedAt;
    this.counts = Object.fromEntries(PAGE_INCIDENT_KINDS.map((kind) => [kind, 0])) as Record<PageIncidentKind, number>;
  }

  elapsedMs(): number {
    return Date.now() - this.startedAt;
  }

  /** Records one incident and returns how many of this kind have happened so far. */
  record(kind: PageIncidentKind, detail: string): number {
    const count = ++this.counts[kind];
    if (count <= this.maxPerKind) {
      this.incidents.push({ kind, detail: shorten(detail), atMs: this.elapsedMs() });
    } else if (count === this.maxPerKind + 1) {
      this.incidents.push({
        kind,
        detail: `more than ${this.maxPerKind} ${kind} incidents; later ones are only counted (see incidentCounts)`,
        atMs: this.elapsedMs(),
      });
    }
    return count;
  }
}
