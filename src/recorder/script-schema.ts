/**
 * The recorder's input: an action script, a YAML file
 * that says which site to open, how to classify the task, and what a person does on
 * it. `loadActionScript` parses and validates one, and every problem is reported as
 * "file:line:col: field.path: message" so a script author can jump straight to it.
 *
 * Objects are strict: a misspelt key (`locatr:`) is an error, not a silently ignored
 * field, because a script that records the wrong interaction wastes a whole recording.
 */
import path from "node:path";
import { z } from "zod";
import { MAX_RANDOM_SEED } from "../browser/determinism.ts";
import { readYamlSource } from "../config/yaml-source.ts";
import { INTERACTION_CLASSES, ResolutionString, VISUAL_CLASSES } from "../tasks/schema.ts";

export const MIN_SCRIPT_ACTIONS = 3;
export const MAX_SCRIPT_ACTIONS = 12;
export const DEFAULT_RESOLUTION = "1280x720";
export const DEFAULT_ENVIRONMENT = "Chromium headless, recorded by iwr record";

const locator = z.string().trim().min(1, { message: "locator must be a non-empty Playwright selector" });
const description = z.string().trim().min(1, { message: "description must say in words what the target is" });
const assertion = z.string().default("");
const visual = z.boolean().default(false);

const ClickActionSchema = z.strictObject({
  type: z.literal("Click"),
  locator,
  description,
  assertion,
  visual,
});

const TypeActionSchema = z.strictObject({
  type: z.literal("Type"),
  locator,
  description,
  /** Typed character by character into the element (after clicking it, like a person). */
  text: z.string().min(1, { message: "text must not be empty for a Type action" }),
  assertion,
  visual,
});

const PressActionSchema = z.strictObject({
  type: z.literal("Press"),
  // No locator: the evaluator presses the key on whatever has focus (e.g. the input a
  // Type action just filled), so the recorder must do the same to stay comparable.
  description,
  /** A Playwright key name: "Enter", "Escape", "ArrowDown", "Control+A"... */
  key: z.string().trim().min(1, { message: "key must be a Playwright key name, e.g. 'Enter'" }),
  assertion,
  visual,
});

const ScrollActionSchema = z.strictObject({
  type: z.literal("Scroll"),
  description,
  /** The evaluator only scrolls down (half a viewport); the field is kept for the task line. */
  direction: z.literal("down").default("down"),
  assertion,
  visual,
});

export const ScriptActionSchema = z.discriminatedUnion("type", [ClickActionSchema, TypeActionSchema, PressActionSchema, ScrollActionSchema]);

export const ActionScriptSchema = z.strictObject({
  /**
   * Task id used by `npm run tasks:build`. Optional: when no script in the suite
   * declares one, ids follow the sorted script file names (1, 2, ...).
   */
  id: z.number().int().nonnegative().optional(),
  /** Folder holding index.html (relative to the script folder's parent, tasks/, or absolute), or a 127.0.0.1 URL. */
  site: z.string().trim().min(1).optional(),
  source_website: z.string().trim().min(1, { message: "source_website must say where the page comes from" }),
  classification: z.strictObject({
    interaction_complexity: z.enum(INTERACTION_CLASSES),
    visual_complexity: z.enum(VISUAL_CLASSES),
    domain: z.string().trim().min(1),
    sub_domain: z.string().trim().min(1).optional(),
  }),
  resolution: ResolutionString.default(DEFAULT_RESOLUTION),
  /** Seed of the page's Math.random while recording (and in the evaluator's deterministic mode); --seed overrides it. */
  seed: z.number().int().min(0).max(MAX_RANDOM_SEED).optional(),
  /** Where the page's clock starts, an ISO 8601 UTC time (default 2025-01-15T09:00:00Z). */
  clock_start: z.iso.datetime({ message: "clock_start must be an ISO 8601 UTC time, e.g. '2025-01-15T09:00:00Z'" }).optional(),
  /** Record a site whose first screen shows no image (the preflight refuses it otherwise); its assets may then be none. */
  allow_no_images: z.boolean().default(false),
  environment: z.string().default(DEFAULT_ENVIRONMENT),
  actions: z
    .array(ScriptActionSchema)
    .min(MIN_SCRIPT_ACTIONS, { message: `a script needs ${MIN_SCRIPT_ACTIONS} to ${MAX_SCRIPT_ACTIONS} actions` })
    .max(MAX_SCRIPT_ACTIONS, { message: `a script needs ${MIN_SCRIPT_ACTIONS} to ${MAX_SCRIPT_ACTIONS} actions` }),
});

export type ScriptAction = z.infer<typeof ScriptActionSchema>;
export type ActionScript = z.infer<typeof ActionScriptSchema>;

/** A validated script plus where it came from (for messages and resolving `site`). */
export interface LoadedActionScript {
  readonly file: string;
  readonly script: ActionScript;
  /** The site from `site:`, if the script names one: an absolute folder, or a 127.0.0.1 URL as written. */
  readonly siteDir?: string;
}

/** Parses and validates `tasks/scripts/<site>.yaml`; every problem names file:line:col and the field. */
export function loadActionScript(file: string): LoadedActionScript {
  const absolute = path.resolve(file);
  const source = readYamlSource(file, { code: "RECORDER", what: "action script", expected: "an action script" });
  const script = source.validate(ActionScriptSchema);
  const siteDir = script.site
    ? /^https?:\/\//i.test(script.site) || path.isAbsolute(script.site)
      ? script.site
      : path.resolve(path.dirname(absolute), "..", script.site)
    : undefined;
  return siteDir ? { file: absolute, script, siteDir } : { file: absolute, script };
}
