/**
 * A real HTTP server on 127.0.0.1 that speaks the OpenAI Chat Completions protocol,
 * for tests of anything that calls a model. No model API is reachable from our
 * machines, so this is the faithful stand-in: requests travel through the real
 * ChatOpenAI → openai SDK → fetch → socket path, and the server sees exactly what a
 * provider would see.
 *
 *   const server = await startOpenAIServer();
 *   server.enqueue("first answer", { status: 429, retryAfter: 1 }, { text: "<html>…" });
 *   const spec = loadModelSpec("gpt-4o", { baseURL: server.baseURL, apiKeyEnv: "none" });
 *   ...
 *   expect(server.requests[0]!.body.temperature).toBe(0);
 *   await server.close();
 *
 * Each chat request takes the next scripted reply from the queue; when the queue is
 * empty, the `reply` function (if given) decides; otherwise the server answers 400
 * "no scripted reply left", so a test that sends more requests than it expected fails
 * loudly instead of passing on a default answer.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

/** A usage block in the protocol's own field names. */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** One scripted answer. A bare string is shorthand for `{ text }`. */
export type ScriptedReply =
  | string
  /** 200 with `choices[0].message.content = text`. Usage defaults to a rough count (4 chars a token, 85 an image). */
  | { text: string; usage?: FakeUsage | "omit"; finishReason?: string; delayMs?: number }
  /** An error status with an OpenAI-style error body; `retryAfter` becomes the `retry-after` header as given (seconds or an HTTP date). */
  | { status: number; message?: string; retryAfter?: number | string; retryAfterMs?: number }
  /** Accept the request and never answer (until the server closes). */
  | { hang: true }
  /**
   * Send 200, the headers and the first `bytes` of a completion's JSON (default: half), then
   * nothing more, the connection held open (a stalled upstream behind a proxy); with
   * `trickleMs`, one more byte every so often instead, so the body is never idle and never ends.
   */
  | { stall: "body"; bytes?: number; trickleMs?: number }
  /**
   * Cut the connection: `before-headers` destroys the socket without a byte of answer;
   * `mid-body` sends 200, the headers and half of a completion's JSON, then destroys it
   * (a proxy or load balancer dropping a long reply).
   */
  | { drop: "before-headers" | "mid-body" }
  /** 200 with a body that is not JSON (default: an HTML page, as a misconfigured proxy sends). */
  | { garbage: true; body?: string }
  /** 200 with `content: ""` (what a reasoning model sends when its token budget ran out). */
  | { empty: true; finishReason?: string };

export interface RecordedRequest {
  /** 0-based arrival order. */
  index: number;
  method: string;
  /** Path without the query, e.g. "/v1/chat/completions". */
  path: string;
  /** Lower-cased header names, as Node delivers them. */
  headers: http.IncomingHttpHeaders;
  /** The parsed JSON body (undefined for GET or an unparsable body). */
  body: ChatRequestBody | undefined;
  receivedAtMs: number;
}

/** The parts of a Chat Completions request body that tests look at. */
export interface ChatRequestBody {
  model: string;
  messages: Array<{ role: string; content: string | Array<ChatContentPart> }>;
  temperature?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  stream?: boolean;
  [key: string]: unknown;
}

export type ChatContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string; detail?: string } }
  | { type: string; [key: string]: unknown };

export type ReplyFunction = (request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>;

export interface OpenAIServerOptions {
  /** Decides the reply when the queue is empty. */
  reply?: ReplyFunction;
  /** Model ids listed by GET /v1/models (default ["fake-model"]). */
  models?: string[];
  /** How GET /v1/models answers: "ok" (default), an HTTP status, or "hang". */
  modelsEndpoint?: "ok" | number | "hang";
  /** When set, chat requests without `Authorization: Bearer <key>` get 401. */
  requireApiKey?: string;
}

export interface FakeOpenAIServer {
  /** e.g. "http://127.0.0.1:43123/v1" — pass as the model's baseURL. */
  readonly baseURL: string;
  /** Every request received (chat and models), in arrival order. */
  readonly requests: RecordedRequest[];
  /** Only the POST /v1/chat/completions requests. */
  chatRequests(): RecordedRequest[];
  /** Append scripted replies; they are used in order, one per chat request. */
  enqueue(...replies: ScriptedReply[]): void;
  /** Replace the reply function used when the queue is empty. */
  setReplyFunction(reply: ReplyFunction | undefined): void;
  /** Chat requests being answered right now, and the most ever at once. */
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** Stops the server, cutting hanging connections. */
  close(): Promise<void>;
}

const DEFAULT_GARBAGE = "<html><body><h1>502 Bad Gateway</h1></body></html>";

/** Rough token counts, so usage is non-zero and grows with the input. */
function estimateUsage(body: ChatRequestBody | undefined, replyText: string): FakeUsage {
  let promptTokens = 0;
  for (const message of body?.messages ?? []) {
    if (typeof message.content === "string") promptTokens += Math.ceil(message.content.length / 4);
    else {
      for (const part of message.content) {
        if (part.type === "text" && typeof part.text === "string") promptTokens += Math.ceil(part.text.length / 4);
        else if (part.type === "image_url") promptTokens += 85;
      }
    }
  }
  return { prompt_tokens: promptTokens, completion_tokens: Math.max(1, Math.ceil(replyText.length / 4)) };
}

function sendJson(response: http.ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(payload);
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  response.end(text);
}

function completion(body: ChatRequestBody | undefined, content: string, usage: FakeUsage | "omit" | undefined, finishReason: string): unknown {
  const payload: Record<string, unknown> = {
    id: `chatcmpl-fake-${Date.now()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body?.model ?? "fake-model",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: finishReason }],
  };
  if (usage !== "omit") {
    const counted = usage ?? estimateUsage(body, content);
    payload.usage = { ...counted, total_tokens: counted.prompt_tokens + counted.completion_tokens };
  }
  return payload;
}

async function readBody(request: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startOpenAIServer(options: OpenAIServerOptions = {}): Promise<FakeOpenAIServer> {
  const queue: ScriptedReply[] = [];
  const requests: RecordedRequest[] = [];
  let replyFunction = options.reply;
  let inFlight = 0;
  let maxInFlight = 0;
  const startedAt = Date.now();

  async function answerChat(record: RecordedRequest, response: http.ServerResponse): Promise<void> {
    if (options.requireApiKey !== undefined && record.headers.authorization !== `Bearer ${options.requireApiKey}`) {
      // Like OpenAI, echo the key that was sent: callers must keep it out of their error messages.
      const sent = String(record.headers.authorization ?? "").replace(/^Bearer /, "");
      sendJson(response, 401, { error: { message: `Incorrect API key provided: ${sent}.`, type: "invalid_request_error", code: "invalid_api_key" } });
      return;
    }
    const scripted = queue.shift() ?? (replyFunction ? await replyFunction(record) : undefined);
    if (scripted === undefined) {
      sendJson(response, 400, {
        error: { message: `openai-server: no scripted reply left for chat request #${record.index}`, type: "invalid_request_error" },
      });
      return;
    }
    const reply = typeof scripted === "string" ? { text: scripted } : scripted;
    if ("hang" in reply) return; // the socket stays open until close()
    if ("stall" in reply) {
      const text = JSON.stringify(completion(record.body, "this reply stalls in the middle", undefined, "stop"));
      let sent = reply.bytes ?? Math.floor(text.length / 2);
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
      response.write(text.slice(0, sent));
      if (reply.trickleMs) {
        const timer = setInterval(() => {
          if (sent >= text.length - 1 || response.destroyed) return clearInterval(timer);
          response.write(text.slice(sent, ++sent));
        }, reply.trickleMs);
        response.on("close", () => clearInterval(timer));
      }
      return; // held open until the client gives up or the server closes
    }
    if ("drop" in reply) {
      if (reply.drop === "before-headers") {
        response.socket?.destroy();
        return;
      }
      const text = JSON.stringify(completion(record.body, "this reply is cut off in the middle", undefined, "stop"));
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
      response.write(text.slice(0, Math.floor(text.length / 2)));
      setTimeout(() => response.socket?.destroy(), 20);
      return;
    }
    if ("garbage" in reply) {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(reply.body ?? DEFAULT_GARBAGE);
      return;
    }
    if ("empty" in reply) {
      sendJson(response, 200, completion(record.body, "", { prompt_tokens: 10, completion_tokens: 0 }, reply.finishReason ?? "length"));
      return;
    }
    if ("status" in reply) {
      const headers: Record<string, string> = {};
      if (reply.retryAfter !== undefined) headers["retry-after"] = String(reply.retryAfter);
      if (reply.retryAfterMs !== undefined) headers["retry-after-ms"] = String(reply.retryAfterMs);
      sendJson(response, reply.status, { error: { message: reply.message ?? `scripted status ${reply.status}`, type: "server_error" } }, headers);
      return;
    }
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    sendJson(response, 200, completion(record.body, reply.text, reply.usage, reply.finishReason ?? "stop"));
  }

  function answerModels(response: http.ServerResponse): void {
    const mode = options.modelsEndpoint ?? "ok";
    if (mode === "hang") return;
    if (typeof mode === "number") {
      sendJson(response, mode, { error: { message: `scripted status ${mode}` } });
      return;
    }
    const data = (options.models ?? ["fake-model"]).map((id) => ({ id, object: "model", created: 0, owned_by: "iwr-test" }));
    sendJson(response, 200, { object: "list", data });
  }

  const server = http.createServer((request, response) => {
    void (async () => {
      const path = (request.url ?? "/").split("?")[0] ?? "/";
      const text = await readBody(request);
      let body: ChatRequestBody | undefined;
      try {
        body = text ? (JSON.parse(text) as ChatRequestBody) : undefined;
      } catch {
        body = undefined;
      }
      const record: RecordedRequest = {
        index: requests.length,
        method: request.method ?? "GET",
        path,
        headers: request.headers,
        body,
        receivedAtMs: Date.now() - startedAt,
      };
      requests.push(record);
      if (request.method === "GET" && path.endsWith("/models")) {
        answerModels(response);
        return;
      }
      if (request.method === "POST" && path.endsWith("/chat/completions")) {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        // Count a request as done when its answer is sent or its socket is cut.
        let counted = true;
        const done = (): void => {
          if (counted) inFlight -= 1;
          counted = false;
        };
        response.on("finish", done);
        response.on("close", done);
        await answerChat(record, response);
        return;
      }
      sendJson(response, 404, { error: { message: `openai-server: no route ${request.method} ${path}` } });
    })().catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, { error: { message: `openai-server crashed: ${String(error)}` } });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    chatRequests: () => requests.filter((request) => request.path.endsWith("/chat/completions")),
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    setReplyFunction: (reply) => {
      replyFunction = reply;
    },
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** The user-visible parts of a recorded chat request's last message, in order: text and image URLs. */
export function messageParts(request: RecordedRequest, messageIndex = -1): ChatContentPart[] {
  const messages = request.body?.messages ?? [];
  const message = messages.at(messageIndex);
  if (!message) return [];
  return typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
}
