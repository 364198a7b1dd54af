// The tasks page: one row per task, one column per arm (Final, IFS, the first failing step), with filters by arm, class,
// failing step kind and free text over the task's actions and assertions (and the judge's and replay's words on failures).
import { useMemo, useState } from "preact/hooks";
import { cellHash, failureBadge, html, pct, useJson } from "./common.js";

/** The filters as the URL keeps them (so a filtered page can be linked and reloaded). */
function readFilters(query, run) {
  const arms = query.get("arms");
  return {
    arms: arms ? arms.split(",").filter((name) => run.arms.some((arm) => arm.name === name)) : run.arms.map((arm) => arm.name),
    interaction: query.get("interaction") ?? "",
    visual: query.get("visual") ?? "",
    kind: query.get("kind") ?? "",
    q: query.get("q") ?? "",
  };
}

function writeFilters(filters, run) {
  const query = new URLSearchParams();
  if (filters.arms.length !== run.arms.length) query.set("arms", filters.arms.join(","));
  for (const key of ["interaction", "visual", "kind", "q"]) if (filters[key]) query.set(key, filters[key]);
  const text = query.toString();
  history.replaceState(null, "", `#/tasks${text ? `?${text}` : ""}`);
}

/** Does a cell match the failing-step filter ("" any, "passed", or a failure kind)? */
const kindMatches = (cell, kind) => !kind || (kind === "passed" ? !cell.failure : cell.failure?.kind === kind);

function summarize(cells) {
  const mean = (pick) => cells.reduce((total, cell) => total + pick(cell), 0) / cells.length;
  // The first repeat's first failing step stands for the arm; the others are counted.
  const first = cells[0];
  const failing = cells.filter((cell) => cell.failure).length;
  return { final: mean((cell) => cell.final), ifs: mean((cell) => cell.ifs), first, failing, repeats: cells.length };
}

export function TasksPage({ run, version, labels, query }) {
  const payload = useJson("/api/cells", version);
  const [filters, setFilters] = useState(() => readFilters(query, run));
  const [sortArm, setSortArm] = useState("");
  const update = (change) => {
    const next = { ...filters, ...change };
    setFilters(next);
    writeFilters(next, run);
  };
  const data = payload.data;
  const view = useMemo(() => {
    if (!data) return undefined;
    const byTask = new Map();
    for (const cell of data.cells) {
      if (!byTask.has(cell.taskId)) byTask.set(cell.taskId, new Map());
      const arms = byTask.get(cell.taskId);
      if (!arms.has(cell.arm)) arms.set(cell.arm, []);
      arms.get(cell.arm).push(cell);
    }
    const needle = filters.q.trim().toLowerCase();
    const rows = [];
    for (const task of data.tasks) {
      if (filters.interaction && task.interaction !== filters.interaction) continue;
      if (filters.visual && task.visual !== filters.visual) continue;
      const arms = byTask.get(task.id) ?? new Map();
      const shown = filters.arms.flatMap((arm) => arms.get(arm) ?? []);
      if (shown.length === 0) continue;
      const matching = shown.filter((cell) => kindMatches(cell, filters.kind));
      if (matching.length === 0) continue;
      let hit;
      if (needle) {
        const action = task.actions.findIndex((entry) => `${entry.description}\n${entry.assertion}`.toLowerCase().includes(needle));
        const failure = matching.find((cell) => cell.failure?.detail.toLowerCase().includes(needle));
        if (action < 0 && !failure) continue;
        hit =
          action >= 0
            ? `step ${action + 1}: ${task.actions[action].assertion || task.actions[action].description}`
            : `${failure.arm} r${failure.repeat}: ${failure.failure.detail}`;
      }
      rows.push({ task, arms, hit, matching: new Set(matching.map((cell) => cell.id)) });
    }
    if (sortArm) {
      const finalOf = (row) => {
        const cells = row.arms.get(sortArm);
        return cells ? summarize(cells).final : -1;
      };
      rows.sort((a, b) => finalOf(a) - finalOf(b) || a.task.id - b.task.id);
    }
    return { rows, cells: rows.reduce((total, row) => total + row.matching.size, 0) };
  }, [data, filters, sortArm]);

  if (payload.error) return html`<p class="error">${payload.error}</p>`;
  if (!data || !view) return html`<p class="loading">loading…</p>`;
  const interactions = [...new Set(data.tasks.map((task) => task.interaction))].sort();
  const visuals = [...new Set(data.tasks.map((task) => task.visual))].sort();
  const toggleArm = (name) =>
    update({
      arms: filters.arms.includes(name)
        ? filters.arms.filter((arm) => arm !== name)
        : run.arms.map((arm) => arm.name).filter((arm) => arm === name || filters.arms.includes(arm)),
    });
  return html`<div>
    <h1>Tasks</h1>
    <div class="filters" data-testid="filters">
      <fieldset class="arm-filter">
        <legend>arms</legend>
        ${run.arms.map(
          (arm) => html`<label class=${arm.calibration ? "calibration" : ""} title=${arm.kind}>
            <input type="checkbox" name="arm" value=${arm.name} checked=${filters.arms.includes(arm.name)} onChange=${() => toggleArm(arm.name)} />${arm.name}
          </label>`,
        )}
        <button type="button" onClick=${() => update({ arms: run.arms.map((arm) => arm.name) })}>all</button>
      </fieldset>
      <label>interaction
        <select name="interaction" value=${filters.interaction} onChange=${(event) => update({ interaction: event.currentTarget.value })}>
          <option value="">any</option>${interactions.map((name) => html`<option value=${name}>${name}</option>`)}
        </select>
      </label>
      <label>visual
        <select name="visual" value=${filters.visual} onChange=${(event) => update({ visual: event.currentTarget.value })}>
          <option value="">any</option>${visuals.map((name) => html`<option value=${name}>${name}</option>`)}
        </select>
      </label>
      <label>first failing step
        <select name="kind" value=${filters.kind} onChange=${(event) => update({ kind: event.currentTarget.value })}>
          <option value="">any</option>
          <option value="passed">passed every step</option>
          ${run.failureKinds.map((entry) => html`<option value=${entry.kind}>${entry.label}</option>`)}
        </select>
      </label>
      <label>search assertions
        <input type="search" name="q" placeholder="words in an action, an assertion or a judge's reason" value=${filters.q}
          onInput=${(event) => update({ q: event.currentTarget.value })} />
      </label>
    </div>
    <p class="note" data-testid="task-count">${view.rows.length} of ${data.tasks.length} tasks · ${view.cells} matching cells. Each arm: mean Final (IFS) over
      repeats and the first repeat's first failing step; click a header to sort by that arm's Final.</p>
    <table class="tasks" data-testid="tasks-table">
      <thead>
        <tr>
          <th class="sortable" onClick=${() => setSortArm("")}>task</th><th>site</th><th>class</th>
          ${filters.arms.map((arm) => html`<th class=${`sortable${sortArm === arm ? " sorted" : ""}`} onClick=${() => setSortArm(arm)}>${arm}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${view.rows.map(
          (row) => html`<tr key=${row.task.id} data-task=${row.task.id}>
            <td><a href=${`#/task/${row.task.id}`}>${row.task.id}</a></td>
            <td>${row.task.site}${row.hit ? html`<div class="hit">${row.hit}</div>` : ""}</td>
            <td>${row.task.interaction}/${row.task.visual}</td>
            ${filters.arms.map((arm) => {
              const cells = row.arms.get(arm);
              if (!cells) return html`<td class="empty">–</td>`;
              const summary = summarize(cells);
              const dim = !cells.some((cell) => row.matching.has(cell.id));
              const href = cells.length === 1 ? cellHash(summary.first) : `#/task/${row.task.id}?arm=${encodeURIComponent(arm)}`;
              return html`<td class=${`cell${dim ? " dim" : ""}`} data-arm=${arm}>
                <a href=${href}><b>${pct(summary.final)}</b> <span class="sub">IFS ${pct(summary.ifs)}</span></a>
                <div>${failureBadge(summary.first.failure, labels)}${
                  summary.repeats > 1 ? html` <span class="sub">${summary.failing}/${summary.repeats} fail</span>` : ""
                }</div>
              </td>`;
            })}
          </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}
