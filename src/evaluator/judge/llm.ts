/**
 * The benchmark's assertion judge: a VLM sees the screenshot before and after the
 * action and answers `{"think": ..., "result": "Yes"|"No"}`. A reply that is empty or
 * unparsable is asked again with a reminder of the format (a changed request, so a
 * response cache cannot hand back the same bad answer); an HTTP failure that the
 * client's own retries did not cure is tried again as a whole. When every attempt
 * fails, the verdict records the failure and every raw reply, and counts as "No".
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { errorMessage, IwrError } from "../../errors.ts";
import { userMessage } from "../../models/message.ts";
import type { ModelClient } from "../../models/types.ts";
import { loadPromptOverridable, renderFromAvailable } from "../../prompts/template.ts";
import { parseJudgeReply, parseJudgeReplyAsHarness } from "./parse-reply.ts";
import type { AssertionInput, AssertionJudge, AssertionVerdict, JudgeFailure } from "./types.ts";

export interface LlmJudgeOptions {
  client: ModelClient;
  /** Attempts per assertion, first one included (default 3). */
  maxAttempts?: number;
  /** How a reply is read: ours (default) or the harness's (the official profile). */
  parse?: JudgeReplyParse;
  /** The prompt template's name (default judge-assertion; the official profile's names no action). */
  promptName?: string;
  /** A folder whose templates replace ours by name (`--prompts-dir`). */
  promptsDir?: string;
}

export type JudgeReplyParse = "iwr" | "harness";

const FORMAT_REMINDER =
  'Your previous reply could not be read. Reply again with only the JSON object {"think": "...", "result": "Yes"} or {"think": "...", "result": "No"}.';

function slotSafe(text: string): string {
  return text.replace(/\{\{/g, "{ {").replace(/\}\}/g, "} }");
}

export function createLlmJudge(options: LlmJudgeOptions): AssertionJudge {
  const prompt = loadPromptOverridable(options.promptName ?? "judge-assertion", options.promptsDir);
  const maxAttempts = Math.max(1, options.maxAttempts ?? 3);
  const parseReply = options.parse === "harness" ? parseJudgeReplyAsHarness : parseJudgeReply;
  return {
    kind: "llm",
    promptHashes: { [prompt.name]: prompt.hash },
    async judge(input: AssertionInput): Promise<AssertionVerdict> {
      const started = Date.now();
      const rendered = renderFromAvailable(prompt, {
        action_type: input.actionType,
        action_description: slotSafe(input.actionDescription),
        assertion: slotSafe(input.assertion),
      });
      const question = userMessage(rendered.text, [input.before, input.after]);
      const replies: string[] = [];
      const requestHashes: string[] = [];
      let messages: BaseMessage[] = [question];
      let failure: JudgeFailure | undefined;
      for (let attempt = 1; attempt <= maxAttempts; attempt++) {
        let text: string;
        try {
          const result = await options.client.invoke(messages, input.sample ? { sample: input.sample } : {});
          text = result.text;
          requestHashes.push(result.requestHash);
        } catch (error) {
          // The client turns an empty reply into MODEL_REPLY; anything else is the request failing.
          const empty = error instanceof IwrError && error.code === "MODEL_REPLY";
          replies.push(empty ? "" : `(request failed) ${errorMessage(error)}`);
          failure = { kind: empty ? "empty" : "http", message: errorMessage(error) };
          messages = empty ? [question, userMessage(FORMAT_REMINDER)] : messages;
          continue;
        }
        replies.push(text);
        const parsed = parseReply(text);
        if (parsed) {
          return {
            result: parsed.result,
            ...(parsed.think !== undefined ? { think: parsed.think } : {}),
            replies,
            attempts: attempt,
            requestHashes,
            latencyMs: Date.now() - started,
          };
        }
        failure = text.trim()
          ? { kind: "unparsable", message: `reply has no Yes/No result: '${text.trim().slice(0, 120)}'` }
          : { kind: "empty", message: "the judge replied with empty text" };
        messages = [question, new AIMessage(text || "(empty)"), userMessage(FORMAT_REMINDER)];
      }
      return {
        result: "No",
        failure: failure ?? { kind: "unparsable", message: "no attempt was made" },
        replies,
        attempts: maxAttempts,
        requestHashes,
        latencyMs: Date.now() - started,
      };
    },
  };
}
