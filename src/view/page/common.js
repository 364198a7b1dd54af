// Shared parts of the view's pages: data loading, formatting, links, a sortable table and lazy images.
import { html } from "htm/preact";
import { useEffect, useMemo, useState } from "preact/hooks";

export { html };

/** Fetches JSON from `url` again whenever `version` changes (live mode); keeps the last data while reloading. */
export function useJson(url, version) {
  const [state, setState] = useState({ data: undefined, error: undefined, url: undefined });
  useEffect(() => {
    if (!url) return undefined;
    // Data already of this version (live mode announces the version the page loaded with): nothing to fetch.
    if (state.url === url && state.data !== undefined && state.data.version === version) return undefined;
    let cancelled = false;
    fetch(url)
      .then(async (response) => {
        const body = await response.json().catch(() => ({}));
        if (!response.ok) throw new Error(body.error ?? `${response.status} ${response.statusText}`);
        return body;
      })
      .then(
        (data) => !cancelled && setState({ data, error: undefined, url }),
        (error) =>
          !cancelled && setState((previous) => ({ data: previous.url === url ? previous.data : undefined, error: String(error.message ?? error), url })),
      );
    return () => {
      cancelled = true;
    };
  }, [url, version]);
  return state.url === url ? state : { data: undefined, error: undefined };
}

export const pct = (value) => (value === undefined || value === null || Number.isNaN(value) ? "–" : (value * 100).toFixed(1));
export const money = (value) => (value === undefined ? "–" : `$${value.toFixed(value < 1 ? 4 : 2)}`);
export const seconds = (ms) => (ms === undefined ? "–" : `${(ms / 1000).toFixed(1)} s`);
export const interval = (pair) => (pair ? `${pct(pair[0])}–${pct(pair[1])}` : "–");

/** The hash of a cell's page. */
export const cellHash = (cell) => `#/cell/${encodeURIComponent(cell.arm)}/${cell.repeat}/${cell.taskId}`;
/** The URL path of a cell in the server's routes. */
export const cellPath = (cell) => `${encodeURIComponent(cell.arm)}/${cell.repeat}/${cell.taskId}`;

/** "step 3 (Click): judge No", or "passed". */
export function failureLabel(failure, labels) {
  if (!failure) return "passed";
  const where = failure.step === null || failure.step === undefined ? "" : `step ${failure.step + 1}${failure.actionType ? ` (${failure.actionType})` : ""}: `;
  return `${where}${labels[failure.kind] ?? failure.kind}`;
}

/** The first failing step as a badge (a plain function, not a component: the tasks page draws thousands). */
export function failureBadge(failure, labels) {
  if (!failure) return html`<span class="badge ok">passed</span>`;
  return html`<span class=${`badge kind-${failure.kind}`} title=${failure.detail}>${failureLabel(failure, labels)}</span>`;
}

export const FailureBadge = ({ failure, labels }) => failureBadge(failure, labels);

/**
 * A table whose columns sort on a click of their header (again: the other way).
 * columns: [{ key, title, value(row) → number|string for sorting, render(row) → content, className }]
 */
export function SortableTable({ columns, rows, initialSort, rowKey, className, testId }) {
  const [sort, setSort] = useState(initialSort ?? { key: columns[0].key, descending: false });
  const sorted = useMemo(() => {
    const column = columns.find((entry) => entry.key === sort.key) ?? columns[0];
    const value = column.value ?? (() => 0);
    const copy = [...rows];
    copy.sort((a, b) => {
      const x = value(a);
      const y = value(b);
      const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true });
      return sort.descending ? -order : order;
    });
    return copy;
  }, [rows, sort, columns]);
  const header = (column) => {
    const active = column.key === sort.key;
    const toggle = () => setSort({ key: column.key, descending: active ? !sort.descending : column.descendingFirst === true });
    return html`<th class=${`${column.className ?? ""} sortable${active ? " sorted" : ""}`} onClick=${toggle} data-column=${column.key} title="sort">
      ${column.title}${active ? (sort.descending ? " ▾" : " ▴") : ""}
    </th>`;
  };
  return html`<table class=${className ?? ""} data-testid=${testId}>
    <thead><tr>${columns.map(header)}</tr></thead>
    <tbody>
      ${sorted.map(
        (row) =>
          html`<tr key=${rowKey(row)} data-row=${rowKey(row)}>
            ${columns.map((column) => html`<td class=${column.className ?? ""}>${column.render(row)}</td>`)}
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** A lazily loaded thumbnail that opens the full image; a placeholder says when there is none. */
export function Thumb({ src, caption, size = "medium", missing = "none" }) {
  if (!src)
    return html`<figure class="thumb missing"><div class="placeholder">${missing}</div>${caption ? html`<figcaption>${caption}</figcaption>` : ""}</figure>`;
  return html`<figure class="thumb">
    <a href=${`${src}?size=full`} target="_blank" rel="noopener"><img loading="lazy" decoding="async" src=${`${src}?size=${size}`} alt=${caption ?? ""} /></a>
    ${caption ? html`<figcaption>${caption}</figcaption>` : ""}
  </figure>`;
}

/** Hash routes: "#/tasks?arm=a" → { path: ["tasks"], query: URLSearchParams }. */
export function parseHash(hash) {
  const text = hash.replace(/^#\/?/, "");
  const [pathPart, queryPart] = text.split("?");
  return { path: (pathPart ?? "").split("/").filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(queryPart ?? "") };
}
