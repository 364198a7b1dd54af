/**
 * The view's two lists, computed once per version of the index: the run's summary (the
 * report's own arm table with intervals, Final per class, the failure summary) and every
 * cell in brief with every task's actions (what the tasks page filters and searches).
 */

import { armSummaries, classTables } from "../report/arm-scores.ts";
import { failureSummary } from "../report/failures.ts";
import { actionCheckpoints, failureTaskOf } from "../report/report-data.ts";
import type { RunIndex } from "./run-index.ts";

/** The report's default number of bootstrap resamples, when run.json names none. */
const DEFAULT_RESAMPLES = 10_000;

/** Per index, the lists of its current version as JSON text (a page asks for them on every load). */
const cache = new WeakMap<RunIndex, { version: number; summary?: string; cells?: string }>();

function cached(index: RunIndex, key: "summary" | "cells", make: () => unknown): string {
  let entry = cache.get(index);
  if (!entry || entry.version !== index.version) {
    entry = { version: index.version };
    cache.set(index, entry);
  }
  entry[key] ??= JSON.stringify(make());
  return entry[key];
}

/** The run's summary as JSON: the arms (intervals, per class, cost) and the failure summary. */
export function runSummaryJson(index: RunIndex): string {
  return cached(index, "summary", () => {
    const cells = index.cells().map((cell) => cell.scores);
    const tasks = [...index.tasks.values()].filter((task) => cells.some((cell) => cell.taskId === task.id));
    return {
      version: index.version,
      arms: armSummaries(index.arms, cells, index.run.bootstrapResamples ?? DEFAULT_RESAMPLES),
      byClass: classTables(index.arms, cells, index.tasks),
      failures: failureSummary(cells, tasks.map(failureTaskOf), index.arms),
      resamples: index.run.bootstrapResamples ?? DEFAULT_RESAMPLES,
    };
  });
}

/** Every cell in brief and every task's actions, as JSON. */
export function cellsJson(index: RunIndex): string {
  return cached(index, "cells", () => {
    const cells = index.cells();
    const taskIds = new Set(cells.map((cell) => cell.record.taskId));
    return {
      version: index.version,
      tasks: [...taskIds]
        .sort((a, b) => a - b)
        .map((id) => {
          const task = index.tasks.get(id);
          const checkpoints = task ? actionCheckpoints(task) : undefined;
          return {
            id,
            site: task?.meta.sourceWebsite ?? "unknown",
            interaction: task?.meta.interactionComplexity ?? "unknown",
            visual: task?.meta.visualComplexity ?? "unknown",
            checkpoints: task?.truth.checkpointPaths.length ?? 0,
            actions: (task?.truth.actions ?? []).map((action, step) => ({
              type: action.type,
              description: action.parameters.description,
              assertion: action.logical_assertion,
              checkpoint: checkpoints?.[step]?.checkpoint ?? null,
            })),
          };
        }),
      cells: cells.map(({ id, record, scores }) => ({
        id,
        arm: record.arm,
        repeat: record.repeat,
        taskId: record.taskId,
        status: record.status,
        hasPage: scores.hasPage,
        final: scores.final,
        ifs: scores.ifs,
        vfs: scores.vfs,
        costUsd: scores.costUsd,
        executedSteps: scores.executedSteps,
        ...(scores.failure ? { failure: scores.failure } : {}),
        ...(scores.error ? { error: scores.error.slice(0, 300) } : {}),
      })),
    };
  });
}
