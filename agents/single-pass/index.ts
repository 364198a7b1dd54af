/**
 * The single-pass generator: TaskInputs in, a page (or a recorded failure) out.
 *
 * `runSinglePass` never throws for a per-task problem (unreadable video, sheets over
 * the image cap, a model that keeps failing, a reply without HTML): it returns the
 * failure with whatever state the graph had reached, so the caller can record the
 * prompt hash, image counts and raw reply beside the error and go on.
 */
import { type ErrorRecord, toErrorRecord } from "../../src/errors.ts";
import { describeRequest } from "../../src/models/index.ts";
import { stateInputs, type TaskInputs, TaskInputsSchema } from "../../src/tasks/inputs.ts";
import { buildSinglePassGraph, type SinglePassGraph } from "./graph.ts";
import { prepareInputs } from "./nodes/prepare-inputs.ts";
import { singlePassMessage } from "./request.ts";
import type { SinglePassContext, SinglePassValues } from "./state.ts";

export type { SinglePassContext, SinglePassValues } from "./state.ts";

export interface SinglePassOutcome {
  /** The last state the graph reached: complete on success, partial after an error. */
  state: Partial<SinglePassValues>;
  /** The post-processed page, when there is one. */
  html?: string;
  /** Why there is no page. */
  failure?: ErrorRecord;
}

let compiled: SinglePassGraph | undefined;

export async function runSinglePass(inputs: TaskInputs, context: SinglePassContext, options: { signal?: AbortSignal } = {}): Promise<SinglePassOutcome> {
  compiled ??= buildSinglePassGraph();
  let state: Partial<SinglePassValues> = {};
  try {
    const stream = await compiled.stream(
      { inputs: stateInputs(inputs) },
      {
        streamMode: "values",
        context: { promptFile: undefined, sample: undefined, protocol: undefined, ...context },
        ...(options.signal ? { signal: options.signal } : {}),
      },
    );
    for await (const values of stream) state = values;
  } catch (error) {
    return { state, failure: toErrorRecord(error) };
  }
  if (state.html !== undefined) return { state, html: state.html };
  return { state, failure: state.failure ?? { code: "MODEL_REPLY", message: "the graph finished without a page" } };
}

/**
 * The cache key of the request the graph would send for these inputs (prompt, images,
 * model settings), without sending it: a rerun compares it with the one recorded in
 * generation.json to tell a finished page from one made by another prompt or model.
 */
export async function singlePassRequestHash(inputs: TaskInputs, context: SinglePassContext): Promise<string> {
  const prepared = await prepareInputs({ inputs: TaskInputsSchema.parse(stateInputs(inputs)) }, { context });
  const message = singlePassMessage({ prompt: prepared.prompt, images: prepared.images ?? [] });
  return describeRequest(context.model.spec, [message], context.sample ? { sample: context.sample } : {}).hash;
}
