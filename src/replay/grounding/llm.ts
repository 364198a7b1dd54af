/**
 * The benchmark's grounding (docs/protocol.md §3.2): a text model reads the page's
 * accessibility tree and numbered element list and answers an index (Type:
 * `index,"text"`) or -1; when it answers -1, something unparsable, or an index that
 * is not on the list, a vision model gets a screenshot with numbered boxes and the
 * same question. Press actions without a key get the key named by the model.
 * Temperature 0 comes from the model spec (its default).
 */

import { normalizeKey } from "../../browser/actions.ts";
import { formatElementList } from "../../browser/element-index.ts";
import { userMessage } from "../../models/message.ts";
import type { ModelCallResult, ModelClient } from "../../models/types.ts";
import { loadPromptOverridable, type Prompt, renderFromAvailable } from "../../prompts/template.ts";
import type { Grounder, GroundingAnswer, GroundingContext, GroundingExchange, GroundingQuery, KeyAnswer } from "./types.ts";

export interface LlmGrounderOptions {
  /** The text model (the harness uses one model, gpt-4o, for both stages). */
  client: ModelClient;
  /** The vision fallback's model; defaults to `client`. */
  visionClient?: ModelClient;
  /** Whether the prompt shows a Type action's text (default true); the official profile withholds it, as the harness. */
  giveTypedText?: boolean;
  /** A folder whose templates replace ours by name (`--prompts-dir`). */
  promptsDir?: string;
  /** Reading replies: ours (default) or the harness's (bare digits; an index outside the list fails). */
  parse?: "iwr" | "harness";
}

export interface ParsedGrounding {
  index: number;
  text?: string;
}

function stripFences(reply: string): string {
  return reply
    .replace(/```[a-zA-Z]*\n?/g, "")
    .replace(/```/g, "")
    .trim();
}

/**
 * Reads `7`, `[7]`, `Element 7`, `-1`, or for Type `3,"hello"` / `3, hello`.
 * Undefined when the reply holds no number at all.
 */
export function parseGroundingReply(reply: string, actionType: "Click" | "Type"): ParsedGrounding | undefined {
  const body = stripFences(reply);
  if (actionType === "Type") {
    const quoted = /(-?\d+)\]?\s*,\s*"((?:[^"\\]|\\.)*)"/.exec(body);
    if (quoted) {
      let text = quoted[2] ?? "";
      try {
        text = JSON.parse(`"${text}"`) as string;
      } catch {
        // Not valid JSON escapes: keep the characters as the model wrote them.
      }
      return { index: Number(quoted[1]), text };
    }
    const bare = /^\[?(-?\d+)\]?\s*,\s*(.+)$/s.exec(body);
    if (bare) return { index: Number(bare[1]), text: (bare[2] ?? "").trim().replace(/^['"]|['"]$/g, "") };
  }
  const number = /-?\d+/.exec(body);
  return number ? { index: Number(number[0]) } : undefined;
}

/**
 * The harness's reading (operations.py): Click takes the reply only when it is bare
 * digits; Type only when it holds `,"` — the index before it, the text after it with
 * trailing quotes removed. Undefined otherwise (and for -1), which sends the query to
 * the vision fallback.
 */
export function parseGroundingReplyAsHarness(reply: string, actionType: "Click" | "Type"): ParsedGrounding | undefined {
  if (actionType === "Click") {
    const body = reply.trim();
    return /^\d+$/.test(body) ? { index: Number(body) } : undefined;
  }
  const at = reply.indexOf(',"');
  if (at < 0) return undefined;
  const index = Number(reply.slice(0, at).trim());
  if (!Number.isInteger(index) || index < 0) return undefined;
  return {
    index,
    text: reply
      .slice(at + 2)
      .split(',"')[0]!
      .replace(/"+$/, ""),
  };
}

/** Page text goes into a prompt slot: `{{` in it must not look like a slot left unfilled. */
function slotSafe(text: string): string {
  return text.replace(/\{\{/g, "{ {").replace(/\}\}/g, "} }");
}

function exchange(stage: GroundingExchange["stage"], result: ModelCallResult): GroundingExchange {
  return { stage, reply: result.text, requestHash: result.requestHash, cacheHit: result.cacheHit, latencyMs: result.latencyMs };
}

export function createLlmGrounder(options: LlmGrounderOptions): Grounder {
  const prompts: Record<"text" | "vision" | "key", Prompt> = {
    text: loadPromptOverridable("ground-element", options.promptsDir),
    vision: loadPromptOverridable("ground-vision", options.promptsDir),
    key: loadPromptOverridable("ground-key", options.promptsDir),
  };
  const visionClient = options.visionClient ?? options.client;

  const harness = options.parse === "harness";
  const parseReply = harness ? parseGroundingReplyAsHarness : parseGroundingReply;
  const accept = (parsed: ParsedGrounding | undefined, query: GroundingQuery, context: GroundingContext): ParsedGrounding | undefined => {
    if (!parsed || parsed.index < 0) return undefined;
    // The harness clicks whatever index it read; one outside the list fails the step there ("does not exist").
    if (!harness && !context.elements.some((el) => el.index === parsed.index)) return undefined;
    // The text the model answered; the line's only when it is shown to the model and the model restated none.
    return query.actionType === "Type"
      ? { index: parsed.index, text: parsed.text ?? (options.giveTypedText !== false ? query.text : undefined) ?? "" }
      : { index: parsed.index };
  };

  return {
    kind: "llm",
    promptHashes: Object.fromEntries(Object.values(prompts).map((prompt) => [prompt.name, prompt.hash])),
    async locate(query, context): Promise<GroundingAnswer> {
      const exchanges: GroundingExchange[] = [];
      const common = {
        action_type: query.actionType,
        description: slotSafe(query.description),
        text_to_type:
          query.actionType !== "Type"
            ? "(not a Type action)"
            : query.text !== undefined && options.giveTypedText !== false
              ? JSON.stringify(query.text)
              : "(not given: read it from the description)",
        elements: slotSafe(formatElementList(context.elements)),
      };
      const textPrompt = renderFromAvailable(prompts.text, { ...common, accessibility_tree: slotSafe(await context.accessibilityTree()) });
      const textReply = await options.client.invoke([userMessage(textPrompt.text)]);
      exchanges.push(exchange("text", textReply));
      const fromText = accept(parseReply(textReply.text, query.actionType), query, context);
      if (fromText) return { ...fromText, method: "text", exchanges };

      const screenshot = await context.highlightedScreenshot();
      const visionPrompt = renderFromAvailable(prompts.vision, common);
      const visionReply = await visionClient.invoke([userMessage(visionPrompt.text, [screenshot])]);
      exchanges.push(exchange("vision", visionReply));
      const fromVision = accept(parseReply(visionReply.text, query.actionType), query, context);
      if (fromVision) return { ...fromVision, method: "vision", exchanges };
      return {
        index: -1,
        method: "vision",
        exchanges,
        reason:
          `the model answered '${textReply.text.trim().slice(0, 80)}' from the element list ` +
          `and '${visionReply.text.trim().slice(0, 80)}' from the screenshot`,
      };
    },
    async nameKey(description): Promise<KeyAnswer> {
      const rendered = renderFromAvailable(prompts.key, { description: slotSafe(description) });
      const reply = await options.client.invoke([userMessage(rendered.text)]);
      const exchanges = [exchange("key", reply)];
      const answer =
        stripFences(reply.text)
          .split("\n")[0]
          ?.trim()
          .replace(/^key:\s*/i, "") ?? "";
      if (!answer || /^none$/i.test(answer) || answer.length > 30) {
        return { exchanges, reason: `the model named no key ('${reply.text.trim().slice(0, 80)}')` };
      }
      return { key: normalizeKey(answer), exchanges };
    },
  };
}
