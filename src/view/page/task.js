// One task: its actions and assertions, every cell (arm × repeat) with Final, IFS and the first failing step, and a
// side-by-side of chosen arms' screenshots step by step beside the task's checkpoints.
import { useMemo, useState } from "preact/hooks";
import { cellHash, cellPath, FailureBadge, html, money, pct, SortableTable, Thumb, useJson } from "./common.js";

export function TaskPage({ run, version, labels, taskId, query }) {
  const payload = useJson("/api/cells", version);
  const armFromQuery = query.get("arm");
  const [chosen, setChosen] = useState(() => (armFromQuery ? [armFromQuery] : run.arms.slice(0, 4).map((arm) => arm.name)));
  const [repeat, setRepeat] = useState(0);
  const data = payload.data;
  const task = data?.tasks.find((entry) => entry.id === taskId);
  const cells = useMemo(() => (data ? data.cells.filter((cell) => cell.taskId === taskId) : []), [data, taskId]);
  if (payload.error) return html`<p class="error">${payload.error}</p>`;
  if (!data) return html`<p class="loading">loading…</p>`;
  if (!task) return html`<p class="error">The run has no finished cell of task ${taskId}.</p>`;
  const order = new Map(run.arms.map((arm, index) => [arm.name, index]));
  const repeats = [...new Set(cells.map((cell) => cell.repeat))].sort((a, b) => a - b);
  const columns = [
    { key: "arm", title: "arm", value: (cell) => order.get(cell.arm) * 1000 + cell.repeat, render: (cell) => html`<a href=${cellHash(cell)}>${cell.arm}</a>` },
    { key: "repeat", title: "repeat", className: "num", value: (cell) => cell.repeat, render: (cell) => cell.repeat },
    { key: "final", title: "Final", className: "num strong", descendingFirst: true, value: (cell) => cell.final, render: (cell) => pct(cell.final) },
    { key: "ifs", title: "IFS", className: "num", descendingFirst: true, value: (cell) => cell.ifs, render: (cell) => pct(cell.ifs) },
    { key: "vfs", title: "VFS", className: "num", descendingFirst: true, value: (cell) => cell.vfs, render: (cell) => pct(cell.vfs) },
    {
      key: "failure",
      title: "first failing step",
      value: (cell) => (cell.failure ? (cell.failure.step ?? -1) : 1e9),
      render: (cell) => html`<${FailureBadge} failure=${cell.failure} labels=${labels} />`,
    },
    {
      key: "detail",
      title: "why",
      value: (cell) => cell.failure?.detail ?? "",
      render: (cell) => html`<span class="detail">${cell.failure?.detail ?? cell.error ?? ""}</span>`,
    },
    { key: "cost", title: "cost", className: "num", value: (cell) => cell.costUsd, render: (cell) => money(cell.costUsd) },
  ];
  const side = chosen.map((arm) => cells.find((cell) => cell.arm === arm && cell.repeat === repeat)).filter(Boolean);
  const lastShot = Math.max(0, ...side.map((cell) => cell.executedSteps));
  const rows = [];
  for (let shot = 0; shot <= Math.min(lastShot, task.actions.length); shot++) rows.push(shot);
  const toggle = (name) => setChosen(chosen.includes(name) ? chosen.filter((arm) => arm !== name) : [...chosen, name]);
  return html`<div>
    <h1>Task ${task.id} <span class="sub">${task.site} · ${task.interaction}/${task.visual}</span></h1>
    <ol class="actions" start="1" data-testid="task-actions">
      ${task.actions.map(
        (action) =>
          html`<li><b>${action.type}</b> ${action.description}${action.assertion ? html`<div class="assertion">expect: ${action.assertion}</div>` : ""}</li>`,
      )}
    </ol>
    <h2>Cells</h2>
    <${SortableTable}
      columns=${columns}
      rows=${cells}
      rowKey=${(cell) => cell.id}
      initialSort=${{ key: "arm", descending: false }}
      className="cells"
      testId="task-cells"
    />
    <h2>Side by side</h2>
    <div class="filters">
      <fieldset class="arm-filter">
        <legend>arms</legend>
        ${run.arms.map(
          (arm) =>
            html`<label><input type="checkbox" name="side-arm" checked=${chosen.includes(arm.name)} onChange=${() => toggle(arm.name)} />${arm.name}</label>`,
        )}
      </fieldset>
      ${
        repeats.length > 1
          ? html`<label>repeat <select value=${repeat} onChange=${(event) => setRepeat(Number(event.currentTarget.value))}>
              ${repeats.map((value) => html`<option value=${value}>${value}</option>`)}
            </select></label>`
          : ""
      }
    </div>
    <table class="side" data-testid="side-by-side">
      <thead><tr><th>step</th><th>checkpoint</th>
        ${side.map((cell) => html`<th><a href=${cellHash(cell)}>${cell.arm}</a> <span class="sub">${pct(cell.final)}</span></th>`)}
      </tr></thead>
      <tbody>
        ${rows.map((shot) => {
          const action = shot > 0 ? task.actions[shot - 1] : undefined;
          const checkpoint = shot === 0 ? (task.checkpoints > 0 ? 0 : null) : action?.checkpoint;
          return html`<tr>
            <td class="step-label">${action ? html`<b>${shot}. ${action.type}</b><div class="sub">${action.description}</div>` : html`<b>start</b>`}</td>
            <td>${
              checkpoint !== null && checkpoint !== undefined
                ? html`<${Thumb} src=${`/img/checkpoint/${task.id}/${checkpoint}`} size="small" caption=${`step_${checkpoint}`} />`
                : html`<span class="sub">no checkpoint</span>`
            }</td>
            ${side.map((cell) => {
              const failing = cell.failure && cell.failure.step === shot - 1;
              if (shot > cell.executedSteps)
                return html`<td class="empty">${failing ? html`<${FailureBadge} failure=${cell.failure} labels=${labels} />` : "not reached"}</td>`;
              return html`<td class=${failing ? "failing" : ""}>
                <${Thumb} src=${`/img/${cellPath(cell)}/evalpoint/${shot}`} size="small" />
                ${failing ? html`<${FailureBadge} failure=${cell.failure} labels=${labels} />` : ""}
              </td>`;
            })}
          </tr>`;
        })}
      </tbody>
    </table>
  </div>`;
}
