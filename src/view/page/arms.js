// The home page: the arms table (means over tasks with bootstrap intervals, per class, cost; sortable) and what failed.
import { html, interval, money, pct, SortableTable, seconds, useJson } from "./common.js";

function armColumns(summary) {
  const classes = (table) => Object.keys(table);
  const byClass = (kind, name) => ({
    key: `${kind}:${name}`,
    title: name,
    className: "num",
    descendingFirst: true,
    value: (arm) => summary.byClass[kind][name]?.[arm.name] ?? -1,
    render: (arm) => pct(summary.byClass[kind][name]?.[arm.name]),
  });
  return [
    { key: "name", title: "arm", value: (arm) => arm.order, render: (arm) => html`<a href=${`#/tasks?arms=${encodeURIComponent(arm.name)}`}>${arm.name}</a>` },
    { key: "kind", title: "kind", value: (arm) => arm.kind, render: (arm) => arm.kind },
    { key: "cells", title: "cells", className: "num", value: (arm) => arm.cells, render: (arm) => arm.cells },
    { key: "final", title: "Final", className: "num strong", descendingFirst: true, value: (arm) => arm.final, render: (arm) => pct(arm.final) },
    { key: "finalCi", title: "95 % CI", className: "num ci", value: (arm) => arm.ci95.final[0], render: (arm) => interval(arm.ci95.final) },
    { key: "ifs", title: "IFS", className: "num", descendingFirst: true, value: (arm) => arm.ifs, render: (arm) => pct(arm.ifs) },
    { key: "ifsCi", title: "95 % CI", className: "num ci", value: (arm) => arm.ci95.ifs[0], render: (arm) => interval(arm.ci95.ifs) },
    { key: "vfs", title: "VFS", className: "num", descendingFirst: true, value: (arm) => arm.vfs, render: (arm) => pct(arm.vfs) },
    { key: "success", title: "success", className: "num", descendingFirst: true, value: (arm) => arm.successRate, render: (arm) => pct(arm.successRate) },
    { key: "coverage", title: "coverage", className: "num", value: (arm) => arm.coverage, render: (arm) => pct(arm.coverage) },
    { key: "failed", title: "failed", className: "num", descendingFirst: true, value: (arm) => arm.failed, render: (arm) => arm.failed },
    ...classes(summary.byClass.interaction).map((name) => byClass("interaction", name)),
    ...classes(summary.byClass.visual).map((name) => byClass("visual", name)),
    {
      key: "tokens",
      title: "tokens",
      className: "num",
      descendingFirst: true,
      value: (arm) => arm.inputTokens + arm.outputTokens,
      render: (arm) => (arm.inputTokens + arm.outputTokens).toLocaleString("en"),
    },
    { key: "cost", title: "cost", className: "num", descendingFirst: true, value: (arm) => arm.costUsd, render: (arm) => money(arm.costUsd) },
    { key: "wall", title: "wall", className: "num", descendingFirst: true, value: (arm) => arm.wallMs, render: (arm) => seconds(arm.wallMs) },
  ];
}

export function FailureSummary({ failures, arms, labels }) {
  const kindRows = failures.byKind;
  return html`<section id="failures" data-testid="failure-summary">
    <h2>What failed</h2>
    <p>${failures.cells - failures.passed} of ${failures.cells} cells have a step that did not pass; each counts once, by its first failing step.</p>
    ${
      kindRows.length > 0
        ? html`<table class="compact" data-testid="failures-by-kind">
            <thead><tr><th>why the first failing step failed</th><th class="num">cells</th><th class="num">share</th>
              ${arms.map((arm) => html`<th class="num">${arm.name}</th>`)}</tr></thead>
            <tbody>
              ${kindRows.map(
                (row) => html`<tr data-kind=${row.kind}>
                  <td><a href=${`#/tasks?kind=${row.kind}`}>${row.label}</a></td><td class="num">${row.cells}</td><td class="num">${pct(row.share)}</td>
                  ${arms.map((arm) => html`<td class="num">${row.byArm[arm.name] ?? 0}</td>`)}
                </tr>`,
              )}
            </tbody>
          </table>`
        : ""
    }
    ${
      failures.byAction.length > 0
        ? html`<h3>Which actions fail most</h3>
          <p class="note">
            Action type × the task's interaction class: reached = replays that got to such an action; failed = those where it was the first failing step.
          </p>
          <table class="compact" data-testid="failures-by-action">
            <thead><tr><th>action</th><th>class</th><th class="num">reached</th>
              <th class="num">failed</th><th class="num">failure rate</th><th>kinds</th></tr></thead>
            <tbody>
              ${failures.byAction.map(
                (row) => html`<tr>
                  <td>${row.actionType}</td><td>${row.interaction}</td><td class="num">${row.reached}</td><td class="num">${row.failed}</td>
                  <td class="num">${pct(row.failureRate)}</td>
                  <td>${Object.entries(row.byKind)
                    .map(([kind, count]) => `${labels[kind] ?? kind} ×${count}`)
                    .join(", ")}</td>
                </tr>`,
              )}
            </tbody>
          </table>`
        : ""
    }
    <h3>Tasks no arm passes</h3>
    ${
      failures.unpassedTasks.length === 0
        ? html`<p data-testid="unpassed-none">Every task was passed (IFS = 100) by at least one cell.</p>`
        : html`<table class="compact" data-testid="unpassed-tasks">
            <thead><tr><th>task</th><th>site</th><th>class</th><th class="num">cells</th>
              <th class="num">best Final</th><th>best arm</th><th>first failing steps</th></tr></thead>
            <tbody>
              ${failures.unpassedTasks.map(
                (row) => html`<tr>
                  <td><a href=${`#/task/${row.taskId}`}>${row.taskId}</a></td><td>${row.site}</td><td>${row.interaction}/${row.visual}</td>
                  <td class="num">${row.cells}</td><td class="num">${pct(row.bestFinal)}</td><td>${row.bestArm}</td><td>${row.kinds}</td>
                </tr>`,
              )}
            </tbody>
          </table>`
    }
    ${
      failures.passedOnlyByCalibration && failures.passedOnlyByCalibration.length > 0
        ? html`<p>Passed only by calibration arms (built from the true page):
            ${failures.passedOnlyByCalibration.map(
              (row, index) => html`${index > 0 ? ", " : ""}<a href=${`#/task/${row.taskId}`}>${row.taskId}</a> (${row.arms.join(", ")})`,
            )}</p>`
        : ""
    }
  </section>`;
}

export function ArmsPage({ run, version, labels }) {
  const summary = useJson("/api/summary", version);
  if (summary.error) return html`<p class="error">${summary.error}</p>`;
  if (!summary.data) return html`<p class="loading">loading…</p>`;
  const data = summary.data;
  const arms = data.arms.map((arm, order) => ({ ...arm, order }));
  return html`<div>
    <h1>Arms</h1>
    <p class="note">
      Means over tasks (a task's repeats averaged first), in percent; 95 % CI: percentile bootstrap over tasks (${data.resamples} resamples, seeded, as
      report.json). Interaction (L) and visual (V) classes: mean Final. Click a header to sort.
    </p>
    <${SortableTable}
      columns=${armColumns(data)}
      rows=${arms}
      rowKey=${(arm) => arm.name}
      initialSort=${{ key: "name", descending: false }}
      className="arms"
      testId="arms-table"
    />
    <${FailureSummary} failures=${data.failures} arms=${run.arms} labels=${labels} />
  </div>`;
}
