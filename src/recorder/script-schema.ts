/**
 * The recorder's input: an action script (CONTRACTS.md "Action script"), a YAML file
 * that says which site to open, how to classify the task, and what a person does on
 * it. `loadActionScript` parses and validates one, and every problem is reported as
 * "file:line: field.path: message" so a script author can jump straight to it.
 *
 * Objects are strict: a misspelt key (`locatr:`) is an error, not a silently ignored
 * field, because a script that records the wrong interaction wastes a whole recording.
 */
import fs from "node:fs";
import path from "node:path";
import { LineCounter, isMap, isNode, isScalar, parseDocument } from "yaml";
import { z } from "zod";
import { IwrError } from "../errors.ts";
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

export const ScriptActionSchema = z.discriminatedUnion("type", [
  ClickActionSchema,
  TypeActionSchema,
  PressActionSchema,
  ScrollActionSchema,
]);

export const ActionScriptSchema = z.strictObject({
  /**
   * Task id used by `npm run tasks:build`. Optional: when no script in the suite
   * declares one, ids follow the sorted script file names (1, 2, ...).
   */
  id: z.number().int().nonnegative().optional(),
  /** Folder holding index.html: relative to the script folder's parent (tasks/), or absolute. */
  site: z.string().trim().min(1).optional(),
  source_website: z.string().trim().min(1, { message: "source_website must say where the page comes from" }),
  classification: z.strictObject({
    interaction_complexity: z.enum(INTERACTION_CLASSES),
    visual_complexity: z.enum(VISUAL_CLASSES),
    domain: z.string().trim().min(1),
    sub_domain: z.string().trim().min(1).optional(),
  }),
  resolution: ResolutionString.default(DEFAULT_RESOLUTION),
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
  /** Absolute site folder from `site:`, if the script names one. */
  readonly siteDir?: string;
}

function formatPath(issuePath: readonly PropertyKey[]): string {
  let out = "";
  for (const part of issuePath) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || "(root)";
}

function valueAt(data: unknown, issuePath: readonly PropertyKey[]): unknown {
  let current = data;
  for (const part of issuePath) {
    if (current === null || typeof current !== "object" || typeof part === "symbol") return undefined;
    current = (current as Record<string | number, unknown>)[part];
  }
  return current;
}

/**
 * Validates already-parsed script data. `source` names it in messages; `lineOf`
 * maps an issue path to a 1-based line when the YAML positions are known.
 */
export function parseActionScript(
  data: unknown,
  source = "<script>",
  lineOf: (issuePath: readonly PropertyKey[]) => number | undefined = () => undefined,
): ActionScript {
  const result = ActionScriptSchema.safeParse(data);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const line = lineOf(issue.path);
    // zod's own text names the received type; the concrete value helps more.
    const value = valueAt(data, issue.path);
    const got = value !== undefined && (typeof value !== "object" || value === null) ? `, got ${JSON.stringify(value)}` : "";
    return `${source}${line ? `:${line}` : ""}: ${formatPath(issue.path)}: ${issue.message}${got}`;
  });
  throw new IwrError("RECORDER", `invalid action script:\n  ${problems.join("\n  ")}`, { file: source, problems });
}

/** Parses and validates `tasks/scripts/<site>.yaml`. */
export function loadActionScript(file: string): LoadedActionScript {
  const absolute = path.resolve(file);
  let text: string;
  try {
    text = fs.readFileSync(absolute, "utf8");
  } catch (error) {
    throw new IwrError("RECORDER", `cannot read action script ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { file });
  }
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  if (document.errors.length > 0) {
    const first = document.errors[0]!;
    const line = lineCounter.linePos(first.pos[0]).line;
    throw new IwrError("RECORDER", `${file}${line ? `:${line}` : ""}: not valid YAML: ${first.message.split("\n")[0]}`, { file });
  }
  const lineOf = (issuePath: readonly PropertyKey[]): number | undefined => {
    // Walk up the path until a node exists (a missing key points at its parent).
    for (let depth = issuePath.length; depth >= 0; depth--) {
      const keys = issuePath.slice(0, depth).map((part) => (typeof part === "symbol" ? String(part) : part));
      // A mapping's field is reported at its key, where the author wrote it.
      const parent = depth === 0 ? undefined : depth === 1 ? document.contents : document.getIn(keys.slice(0, -1), true);
      if (isMap(parent)) {
        const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === keys[keys.length - 1]);
        if (isNode(pair?.key) && pair.key.range) return lineCounter.linePos(pair.key.range[0]).line;
      }
      const node = depth === 0 ? document.contents : document.getIn(keys, true);
      if (isNode(node) && node.range) return lineCounter.linePos(node.range[0]).line;
    }
    return undefined;
  };
  const script = parseActionScript(document.toJS(), file, lineOf);
  const siteDir = script.site
    ? path.isAbsolute(script.site)
      ? script.site
      : path.resolve(path.dirname(absolute), "..", script.site)
    : undefined;
  return siteDir ? { file: absolute, script, siteDir } : { file: absolute, script };
}
