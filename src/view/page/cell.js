// One cell: per step the checkpoint, the page's screenshot and the video's aligned state; the judge's verdict and reason,
// OCR texts, the replay's incidents, the trace; and for agent cells the iterations timeline, the critiques and the diffs.
import { useEffect, useState } from "preact/hooks";
import { FailureBadge, html, money, pct, seconds, Thumb, useJson } from "./common.js";

const fixed = (value, digits = 2) => (value === undefined || value === null ? "–" : value.toFixed(digits));

function Step({ step, labels, failure }) {
  const title = step.index < 0 ? "start (before any action)" : `${step.index + 1}. ${step.type ?? ""} ${step.description ?? ""}`;
  const verdictClass = step.verdict ? (step.verdict.result === "Yes" ? "yes" : "no") : "";
  return html`<section class=${`step${step.failing ? " failing" : ""}${step.reached ? "" : " unreached"}`} data-step=${step.index}>
    <div class="step-text">
      <h3>${title}</h3>
      ${step.failing ? html`<${FailureBadge} failure=${failure} labels=${labels} />` : ""}
      ${!step.reached ? html`<p class="sub">not reached: the replay stopped before this action</p>` : ""}
      ${step.assertion ? html`<p class="assertion">expect: ${step.assertion}</p>` : ""}
      ${
        step.ok !== undefined
          ? html`<p>replay: ${step.ok ? html`<span class="yes">done</span>` : html`<span class="no">failed</span>`}${step.reason ? ` — ${step.reason}` : ""}${
              step.durationMs !== undefined ? html` <span class="sub">(${step.durationMs} ms)</span>` : ""
            }</p>`
          : ""
      }
      ${
        step.grounding
          ? html`<p class="sub">grounding: ${step.grounding.method ?? ""}${step.grounding.index !== undefined ? ` → element ${step.grounding.index}` : ""}${
              step.grounding.score !== undefined ? ` (score ${fixed(step.grounding.score)})` : ""
            }${step.grounding.target ? ` · ${step.grounding.target}` : ""}${step.grounding.reason ? ` · ${step.grounding.reason}` : ""}</p>`
          : ""
      }
      ${
        step.verdict
          ? html`<p data-testid="verdict">judge: <b class=${verdictClass}>${step.verdict.result}</b>${
              step.verdict.repeats ? html` <span class="sub">(${step.verdict.repeats.join(", ")})</span>` : ""
            }${step.verdict.reason ? html` — <span class="reason">${step.verdict.reason}</span>` : ""}</p>
            ${step.verdict.reply ? html`<details><summary>judge's reply</summary><pre>${step.verdict.reply}</pre></details>` : ""}`
          : ""
      }
      ${
        step.visual
          ? html`<p class="sub">visual list position ${step.visual.position}${step.visual.counted ? "" : " (not counted: after the first failing step)"}${
              step.visual.ocr !== undefined ? ` · OCR ${pct(step.visual.ocr)} · DINO ${pct(step.visual.dino)} · MLLM ${fixed(step.visual.mllm, 0)}` : ""
            }</p>
            ${
              step.visual.checkpointText !== undefined
                ? html`<details data-testid="ocr"><summary>OCR texts</summary>
                    <div class="ocr"><div><b>checkpoint</b><pre>${step.visual.checkpointText}</pre></div>
                      <div><b>page</b><pre>${step.visual.screenshotText}</pre></div></div>
                    ${step.visual.judgeReply ? html`<p class="sub">MLLM: ${step.visual.judgeReply}</p>` : ""}
                  </details>`
                : ""
            }`
          : ""
      }
      ${
        step.selfCheck
          ? html`<p class="sub">self-check: ${
              step.selfCheck.executed === false ? "not executed" : step.selfCheck.screenChanged ? "screen changed" : "screen unchanged"
            }${step.selfCheck.credited !== undefined ? ` · ${step.selfCheck.credited ? "credited" : "not credited"}` : ""}</p>`
          : ""
      }
    </div>
    <div class="step-images">
      <${Thumb} src=${step.checkpoint?.url} caption=${step.checkpoint?.caption ?? "checkpoint"} missing="no checkpoint for this action" />
      <${Thumb} src=${step.screenshot?.url} caption=${step.screenshot?.caption ?? "page"} missing="no screenshot" />
      <${Thumb}
        src=${step.video?.url}
        caption=${step.video ? `${step.video.caption}${step.video.similarity !== undefined ? ` · similarity ${fixed(step.video.similarity)}` : ""}` : "video"}
        missing="no aligned video state (no self-check of this page)"
      />
    </div>
  </section>`;
}

/**
 * The pair of drafts the diff opens on, never a draft against itself: the best draft against
 * the one it was revised from; when the best is a first draft, against its revision; else the
 * first draft against the last.
 */
function defaultPair(drafts) {
  const best = drafts.find((draft) => draft.best) ?? drafts[drafts.length - 1];
  const to = best?.id ?? 0;
  if (best?.parent !== undefined && best.parent !== to) return [best.parent, to];
  const revision = drafts.find((draft) => draft.parent === to && draft.id !== to);
  if (revision) return [to, revision.id];
  return [drafts[0]?.id ?? 0, drafts[drafts.length - 1]?.id ?? 0];
}

function Diff({ cellUrl, drafts, version }) {
  const [initialFrom, initialTo] = defaultPair(drafts);
  const [to, setTo] = useState(initialTo);
  const [from, setFrom] = useState(initialFrom);
  useEffect(() => {
    const [pairFrom, pairTo] = defaultPair(drafts);
    setTo(pairTo);
    setFrom(pairFrom);
  }, [cellUrl]);
  const diff = useJson(`${cellUrl}/diff?from=${from}&to=${to}`, version);
  const select = (value, set) =>
    html`<select value=${value} onChange=${(event) => set(Number(event.currentTarget.value))}>
      ${drafts.map((draft) => html`<option value=${draft.id}>draft ${draft.id}</option>`)}
    </select>`;
  return html`<div class="diff" data-testid="draft-diff">
    <p>diff of the pages: ${select(from, setFrom)} → ${select(to, setTo)}</p>
    ${
      diff.data
        ? // The newline is a value: htm drops a template's own whitespace that holds a line break, which ran the lines together.
          html`<pre>${diff.data.diff
            .split("\n")
            .map(
              (line) =>
                html`<span class=${line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : ""}>${`${line}\n`}</span>`,
            )}</pre>`
        : html`<p class="loading">${diff.error ?? "loading…"}</p>`
    }
  </div>`;
}

function ScoreChart({ drafts }) {
  const width = 420;
  const height = 140;
  const step = drafts.length > 1 ? (width - 60) / (drafts.length - 1) : 0;
  const x = (index) => 40 + index * step;
  const y = (value) => height - 20 - value * (height - 40);
  const line = (pick) =>
    drafts
      .map((draft, index) => [index, pick(draft)])
      .filter(([, value]) => value !== undefined)
      .map(([index, value]) => `${x(index)},${y(value)}`)
      .join(" ");
  return html`<svg class="chart" width=${width} height=${height} viewBox=${`0 0 ${width} ${height}`} role="img" aria-label="self-score and Final by draft">
    <line x1="40" y1=${y(0)} x2=${width - 20} y2=${y(0)} class="axis" />
    <line x1="40" y1=${y(1)} x2=${width - 20} y2=${y(1)} class="grid" />
    <polyline points=${line((draft) => draft.selfScore)} class="self" />
    <polyline points=${line((draft) => draft.final)} class="final" />
    ${drafts.map((draft, index) => html`<text x=${x(index)} y=${height - 4} text-anchor="middle">${draft.id}</text>`)}
    <text x="4" y=${y(1) + 4}>100</text><text x="4" y=${y(0) + 4}>0</text>
    <text x=${width - 150} y="12" class="self-label">— self-score</text><text x=${width - 70} y="12" class="final-label">— Final</text>
  </svg>`;
}

function AgentTimeline({ agent, cellUrl, imageBase, version }) {
  return html`<section class="agent" data-testid="agent-timeline">
    <h2>Iterations</h2>
    <p>
      ${agent.status ?? ""}${agent.stopReason ? ` · stopped: ${agent.stopReason}` : ""}
      ${agent.bestDraft !== undefined ? ` · kept draft ${agent.bestDraft}` : ""}
      ${agent.track ? ` · track ${agent.track}` : ""}${agent.durationMs !== undefined ? ` · ${seconds(agent.durationMs)}` : ""}
      ${agent.usage ? ` · ${agent.usage.calls ?? 0} model calls, ${money(agent.usage.costUsd)}` : ""}
    </p>
    <p class="note">
      Self-score: the agent's own signal while it ran. Final: the evaluator on each saved draft, scored after the agent finished (never fed back).
    </p>
    <${ScoreChart} drafts=${agent.drafts} />
    <table class="compact" data-testid="drafts">
      <thead><tr><th>draft</th><th>round</th><th>made by</th><th class="num">self-score</th>
        <th class="num">Final</th><th class="num">IFS</th><th>the draft's findings</th><th>start</th></tr></thead>
      <tbody>
        ${agent.drafts.map(
          (draft) => html`<tr class=${draft.best ? "best" : ""} data-draft=${draft.id}>
            <td>${draft.id}${draft.best ? " ★" : ""}</td><td>${draft.round}</td>
            <td>${draft.origin ?? ""}${draft.parent !== undefined ? ` of ${draft.parent}` : ""}
              ${draft.edits ? ` (${draft.edits.applied}/${draft.edits.proposed} edits)` : ""}${
                draft.error ? html`<div class="no">${draft.error}</div>` : ""
              }</td>
            <td class="num">${pct(draft.selfScore)}</td><td class="num">${pct(draft.final)}</td><td class="num">${pct(draft.ifs)}</td>
            <td>${draft.findings !== undefined ? `${draft.findings}: ` : ""}${draft.topFindings.join(" · ")}
              ${draft.scoreError ? html`<div class="no">scoring: ${draft.scoreError}</div>` : ""}</td>
            <td>${draft.thumbnail ? html`<${Thumb} src=${`${imageBase}/${draft.thumbnail}`} size="small" />` : ""}</td>
          </tr>`,
        )}
      </tbody>
    </table>
    <h3>Critiques</h3>
    ${agent.critiqueError ? html`<p class="no">${agent.critiqueError}</p>` : ""}
    ${agent.critiques.length === 0 ? html`<p class="sub">no critique in the agent's store</p>` : ""}
    ${agent.critiques.map(
      (critique) => html`<div class="critique" data-testid="critique">
        <b>${critique.latest ? `latest critique${critique.round !== undefined ? ` (round ${critique.round})` : ""}` : "earlier critique"}</b>
        <ul>${critique.defects.map(
          (defect) => html`<li>${defect.where ? html`<b>${defect.where}</b>: ` : ""}${defect.problem} — <i>change:</i> ${defect.change}</li>`,
        )}</ul>
      </div>`,
    )}
    ${agent.drafts.length > 1 ? html`<${Diff} cellUrl=${cellUrl} drafts=${agent.drafts} version=${version} />` : ""}
  </section>`;
}

export function CellPage({ version, labels, arm, repeat, taskId }) {
  const cellUrl = `/api/cell/${encodeURIComponent(arm)}/${repeat}/${taskId}`;
  const detail = useJson(cellUrl, version);
  const [copied, setCopied] = useState(false);
  if (detail.error) return html`<p class="error">${detail.error}</p>`;
  if (!detail.data) return html`<p class="loading">loading…</p>`;
  const cell = detail.data;
  const copy = () =>
    navigator.clipboard?.writeText(cell.trace.command).then(
      () => setCopied(true),
      () => setCopied(false),
    );
  const incidents = Object.entries(cell.incidents.counts);
  return html`<div data-testid="cell-page">
    <h1>${cell.arm} <span class="sub">repeat ${cell.repeat} · <a href=${`#/task/${cell.taskId}`}>task ${cell.taskId}</a> · ${cell.kind}</span></h1>
    <p class="scores">
      Final <b>${pct(cell.scores.final)}</b> · IFS ${pct(cell.scores.ifs)} · LFS ${pct(cell.scores.lfs)} · HFS ${pct(cell.scores.hfs)} · VFS ${pct(
        cell.scores.vfs,
      )}
      ${
        cell.successStep !== undefined ? ` · ${cell.successStep} of ${cell.totalSteps} steps passed` : ""
      } · ${money(cell.costUsd)} · ${cell.tokens} tokens · ${seconds(cell.wallMs)}
    </p>
    <p>${
      cell.failure
        ? html`first failing step: <${FailureBadge} failure=${cell.failure} labels=${labels} /> <span class="detail">${cell.failure.detail}</span>`
        : html`<span class="badge ok">passed every step</span>`
    }</p>
    ${cell.error ? html`<p class="no">${cell.error}</p>` : ""}
    <p class="sub">page: ${cell.page.made ? (cell.page.origin ?? "made") : "none"}${
      cell.evaluator
        ? ` · evaluator: ${Object.entries(cell.evaluator)
            .map(([key, value]) => `${key} ${value}`)
            .join(", ")}`
        : ""
    }</p>
    ${
      cell.trace
        ? html`<p class="trace" data-testid="trace">trace: <code>${cell.trace.command}</code> <button type="button" onClick=${copy}>${
            copied ? "copied" : "copy"
          }</button>
            <a href=${cell.trace.url} download>download trace.zip</a></p>`
        : html`<p class="sub">no trace.zip</p>`
    }
    <details class="incidents" data-testid="incidents" open=${incidents.length > 0}>
      <summary>replay incidents: ${incidents.length === 0 ? "none" : incidents.map(([kind, count]) => `${kind} ×${count}`).join(", ")}</summary>
      ${cell.incidents.loadError ? html`<p class="no">load: ${cell.incidents.loadError}</p>` : ""}
      ${cell.incidents.tornDown ? html`<p class="no">torn down: ${cell.incidents.tornDown}</p>` : ""}
      <ul>${cell.incidents.list.map(
        (incident) => html`<li><b>${incident.kind}</b>${incident.atMs !== undefined ? ` at ${seconds(incident.atMs)}` : ""}: ${incident.detail}</li>`,
      )}</ul>
    </details>
    ${cell.problems.length > 0 ? html`<p class="warning">unreadable records: ${cell.problems.join("; ")}</p>` : ""}
    <h2>Steps <span class="sub">checkpoint · page · video (aligned state)</span></h2>
    <div class="steps" data-testid="steps">${cell.steps.map(
      (step) => html`<${Step} key=${step.index} step=${step} labels=${labels} failure=${cell.failure} />`,
    )}</div>
    ${
      cell.selfCheck
        ? html`<section class="selfcheck">
            <h2>Self-check <span class="sub">${pct(cell.selfCheck.selfScore)} (behaviour ${pct(cell.selfCheck.behaviour)}, appearance ${pct(
              cell.selfCheck.appearance,
            )})</span></h2>
            <ul>${cell.selfCheck.findings.slice(0, 12).map((finding) => html`<li><b>${finding.kind}</b>: ${finding.message}</li>`)}</ul></section>`
        : ""
    }
    ${
      cell.agent
        ? html`<${AgentTimeline}
            agent=${cell.agent}
            cellUrl=${cellUrl}
            imageBase=${`/img/${encodeURIComponent(arm)}/${repeat}/${taskId}`}
            version=${version}
          />`
        : ""
    }
  </div>`;
}
