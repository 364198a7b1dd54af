/**
 * prepare: the task's inputs made ready for every later node, once: the frames a request
 * carries (sampled as the single-pass generator does, within the drafting model's image
 * caps) and the asset sheets, stored content-addressed; the video's stable states (time
 * spans). No model call.
 */
import { errorMessage } from "../../../src/errors.ts";
import { requestImages } from "../../../src/generation/request-images.ts";
import { log } from "../../../src/log/logger.ts";
import { videoStates } from "../../../src/media/video-states.ts";
import { type AgentConfig, type AgentUpdate, type AgentValues, agentContextOf } from "../state.ts";
import { storeFile } from "../store.ts";

export async function prepare(state: AgentValues, config: AgentConfig): Promise<AgentUpdate> {
  const context = await agentContextOf(config);
  const { inputs } = state;
  const selection = await requestImages(inputs, context.drafter.spec);
  let states: AgentValues["videoStates"] = [];
  try {
    const found = await videoStates(inputs.videoPath, context.statesCacheDir ? { cacheDir: context.statesCacheDir } : {});
    states = found.states.map((entry) => ({ index: entry.index, startSec: entry.startSec, endSec: entry.endSec }));
  } catch (error) {
    // The analysis can go on from the frames alone; the self-check records the same problem as a finding.
    log("agent").warn(`task ${inputs.id}: no video states (${errorMessage(error)})`);
  }
  return {
    startedAtMs: state.startedAtMs ?? Date.now(),
    sheets: selection.sheets.map((png) => storeFile(context.workDir, png, "png")),
    frames: selection.frames.map((frame) => ({ ...storeFile(context.workDir, frame.png, "png"), timeSec: frame.timeSec })),
    videoStates: states,
    actions: state.settings.trajectory === "given" ? [...(state.givenActions ?? [])] : [],
  };
}
