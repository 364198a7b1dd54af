/**
 * Scripted models for the agent's tests: a reply function for the local OpenAI-compatible
 * server that answers each kind of request the agent sends (told apart by its prompt's
 * opening words) from a script. A scripted model is a fixture: what it answers is chosen
 * by the test, never presented as a result.
 */
import fs from "node:fs";
import { referencePagePath } from "../../src/calibration/calibration.ts";
import type { Task } from "../../src/tasks/schema.ts";
import { messageParts, type RecordedRequest, type ReplyFunction, type ScriptedReply } from "./openai-server.ts";

export type AgentRequestKind = "analyze" | "draft" | "generate" | "critique" | "revise" | "revise-edits";

/** Which prompt a request was rendered from (the first words of each template). */
export function requestKind(request: RecordedRequest): AgentRequestKind {
  const first = messageParts(request, 0)[0];
  return promptKind(first && first.type === "text" && typeof first.text === "string" ? first.text : "");
}

/** Which of the agent's prompts a text was rendered from (the first words of each template). */
export function promptKind(text: string): AgentRequestKind {
  if (text.startsWith("You are studying a screen recording")) return "analyze";
  if (text.startsWith("You are reviewing a rebuilt web page")) return "critique";
  if (text.includes("<<<<<<< SEARCH")) return "revise-edits";
  if (text.startsWith("You are an expert front-end engineer improving")) return "revise";
  if (text.includes("from a careful description of that recording")) return "draft";
  return "generate";
}

/** The task's true page as a model would answer it (placeholder links, in an html fence). */
export function truePageReply(task: Task): string {
  return `\`\`\`html\n${fs.readFileSync(referencePagePath(task), "utf8")}\n\`\`\``;
}

/** The true page with every script removed: it looks right and does nothing. */
export function scriptlessPageReply(task: Task): string {
  const html = fs.readFileSync(referencePagePath(task), "utf8").replace(/<script\b[\s\S]*?<\/script\s*>/gi, "");
  return `\`\`\`html\n${html}\n\`\`\``;
}

/** A storyboard whose actions are the given descriptions (what a good analysis would infer). */
export function storyboardReply(actions: ReadonlyArray<{ type: string; description: string; text?: string; key?: string }>): string {
  const storyboard = {
    regions: [{ name: "page", description: "the whole page" }],
    texts: [],
    assets: [],
    states: [],
    actions: actions.map((action) => ({
      type: action.type,
      target: action.description,
      ...(action.text ? { text: action.text } : {}),
      ...(action.key ? { key: action.key } : {}),
      effect: "",
    })),
  };
  return `\`\`\`json\n${JSON.stringify(storyboard)}\n\`\`\``;
}

export const CRITIQUE_REPLY = '```json\n{"defects":[{"where":"buttons","problem":"nothing reacts to a click","change":"add the page\'s scripts back"}]}\n```';

export interface ScriptedAgentModel {
  reply: ReplyFunction;
  /** Requests answered so far, by kind. */
  counts: Record<AgentRequestKind, number>;
}

/**
 * Answers each kind from its list in turn (the last entry repeats); kinds without a list
 * get `fallback`.
 */
export function scriptedAgentModel(script: Partial<Record<AgentRequestKind, ScriptedReply[]>>, fallback: ScriptedReply = CRITIQUE_REPLY): ScriptedAgentModel {
  const counts: Record<AgentRequestKind, number> = { analyze: 0, draft: 0, generate: 0, critique: 0, revise: 0, "revise-edits": 0 };
  return {
    counts,
    reply: (request) => {
      const kind = requestKind(request);
      const list = script[kind];
      const index = counts[kind]++;
      if (!list || list.length === 0) return fallback;
      return list[Math.min(index, list.length - 1)]!;
    },
  };
}
