/**
 * A LangChain chat model that answers from a script, in process (no HTTP): the agent's
 * routing tests inject it into the model layer (createModelClient's `chatModel`). Each
 * answer is chosen by the test from the prompt it is asked; it is a fixture, never a
 * result. Token counts may be scripted too, so that budgets can be exercised.
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

export interface ScriptedAnswer {
  text: string;
  inputTokens?: number;
  outputTokens?: number;
}

/** What the model was asked: the prompt's text parts and how many images came with them. */
export interface ScriptedQuestion {
  text: string;
  images: number;
}

export class ScriptedChatModel extends BaseChatModel {
  /** Every question asked, in order. */
  readonly questions: ScriptedQuestion[] = [];

  constructor(private readonly answer: (question: ScriptedQuestion) => string | ScriptedAnswer) {
    super({});
  }

  _llmType(): string {
    return "scripted";
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const parts = messages.flatMap((message) => (typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content));
    const question = {
      text: parts.map((part) => (part.type === "text" && "text" in part ? String(part.text) : "")).join("\n"),
      images: parts.filter((part) => part.type === "image_url").length,
    };
    this.questions.push(question);
    const scripted = this.answer(question);
    const answer = typeof scripted === "string" ? { text: scripted } : scripted;
    const inputTokens = answer.inputTokens ?? 0;
    const outputTokens = answer.outputTokens ?? 0;
    const message = new AIMessage({
      content: answer.text,
      usage_metadata: { input_tokens: inputTokens, output_tokens: outputTokens, total_tokens: inputTokens + outputTokens },
    });
    return { generations: [{ text: answer.text, message }] };
  }
}
