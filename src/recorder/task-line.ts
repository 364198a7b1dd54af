/**
 * The task line (docs/protocol.md §1) a recorded script becomes. Flagged actions get
 * `checkpoint_screenshot: "step_<k>.png"` with k counting flagged actions from 1
 * (step_0 is the initial state), matching the files the session wrote. A Press carries
 * `key_focus`, where the focus was when its key was recorded (when known), for the replay.
 */
import type { KeyFocus } from "../browser/key-focus.ts";
import type { TaskLine } from "../tasks/schema.ts";
import type { ActionScript, ScriptAction } from "./script-schema.ts";

type LineAction = TaskLine["action_sequence"][number];

function parametersFor(action: ScriptAction): LineAction["parameters"] {
  switch (action.type) {
    case "Click":
      return { description: action.description };
    case "Type":
      return { description: action.description, text: action.text };
    case "Press":
      return { description: action.description, key: action.key };
    case "Scroll":
      return { description: action.description, direction: action.direction };
  }
}

export function buildTaskLine(
  id: number,
  script: Pick<ActionScript, "classification" | "resolution" | "environment" | "source_website" | "actions">,
  /** By action index: where a Press's focus was when recorded. */
  keyFocus: ReadonlyArray<KeyFocus | undefined> = [],
): TaskLine {
  let checkpoint = 0;
  const action_sequence = script.actions.map((action, index): LineAction => {
    const focus = action.type === "Press" ? keyFocus[index] : undefined;
    const base: LineAction = {
      type: action.type,
      parameters: parametersFor(action),
      logical_assertion: action.assertion,
      visual_evaluation_flag: action.visual,
      ...(focus ? { key_focus: focus } : {}),
    };
    if (!action.visual) return base;
    checkpoint += 1;
    return { ...base, checkpoint_screenshot: `step_${checkpoint}.png` };
  });
  const { sub_domain, ...classification } = script.classification;
  return {
    id,
    classification: sub_domain === undefined ? classification : { ...classification, sub_domain },
    recording_details: { resolution: script.resolution, environment: script.environment },
    source_website: script.source_website,
    action_sequence,
  };
}
