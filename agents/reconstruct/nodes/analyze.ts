/**
 * analyze: frames and asset sheets → a zod-validated storyboard (layout regions, visible
 * texts, which asset is where, the observed states with their times — the video's stable
 * states are given as candidates — and the inferred actions between them). A reply that
 * is not a storyboard is recorded and the run goes on from the frames alone; with the
 * "inferred" trajectory it then has no actions to replay, which its self-scores show.
 */
import path from "node:path";
import { errorMessage, toErrorRecord } from "../../../src/errors.ts";
import { log } from "../../../src/log/logger.ts";
import { jsonReplyProblem, parseJsonReply } from "../json-reply.ts";
import { callWithPrompt } from "../model-call.ts";
import { type AgentConfig, type AgentUpdate, type AgentValues, agentContextOf } from "../state.ts";
import { storeFile } from "../store.ts";
import { actionsOfStoryboard, StoryboardSchema } from "../storyboard.ts";

const PROMPT = "analyze";

function statesText(states: AgentValues["videoStates"]): string {
  if (states.length === 0) return "- (none found: judge the states from the frames)";
  return states.map((entry) => `- state ${entry.index}: ${entry.startSec.toFixed(1)}–${entry.endSec.toFixed(1)} s`).join("\n");
}

function givenText(state: AgentValues): string {
  if (state.settings.trajectory !== "given" || !state.givenActions?.length) return "none; infer them from the recording.";
  return `\n${state.givenActions
    .map(
      (action, i) =>
        `${i + 1}. ${action.type} ${action.description}${action.text ? ` (text: "${action.text}")` : ""}${action.key ? ` (key: ${action.key})` : ""}`,
    )
    .join("\n")}`;
}

export async function analyze(state: AgentValues, config: AgentConfig): Promise<AgentUpdate> {
  const context = await agentContextOf(config);
  const { inputs } = state;
  const call = {
    prompt: PROMPT,
    variables: {
      width: inputs.resolution.width,
      height: inputs.resolution.height,
      sheet_count: state.sheets.length,
      frame_count: state.frames.length,
      asset_files: inputs.assetFiles.map((file) => path.basename(file)).join(", ") || "(none)",
      video_states: statesText(state.videoStates),
      given_actions: givenText(state),
    },
    images: [...state.sheets.map((sheet) => sheet.path), ...state.frames.map((frame) => frame.path)],
    ...(config.signal ? { signal: config.signal } : {}),
    accept: (text: string) => jsonReplyProblem(text, StoryboardSchema, PROMPT),
  };
  const reply = await callWithPrompt(context.critic, call);
  const update: AgentUpdate = { usageByNode: { analyze: reply.usage }, promptHashes: { [PROMPT]: reply.promptHash } };
  try {
    const storyboard = parseJsonReply(reply.result.text, StoryboardSchema, "analyze");
    const inferredActions = actionsOfStoryboard(storyboard);
    return {
      ...update,
      analysis: { storyboard: storeFile(context.workDir, `${JSON.stringify(storyboard, null, 2)}\n`, "json"), inferredActions },
      ...(state.settings.trajectory === "inferred" ? { actions: inferredActions } : {}),
    };
  } catch (error) {
    log("agent").warn(`task ${inputs.id}: analyze: ${errorMessage(error)}; drafting from the frames alone`);
    // The raw reply is kept in the store for whoever wants to see what the model said.
    storeFile(context.workDir, reply.result.text, "txt");
    return { ...update, analysis: { inferredActions: [], error: toErrorRecord(error) } };
  }
}
