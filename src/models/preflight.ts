/**
 * A check before any work starts, so a missing key or a dead endpoint is one clear
 * error instead of the same failure in every task's result.
 *
 * 1. The key: present in `apiKeyEnv` (or not needed, see endpoint.ts).
 * 2. The endpoint answers GET {baseURL}/models within a few seconds. Any HTTP answer
 *    proves it is reachable (some servers have no /models route: 404 is fine), except
 *    401, which means the key was refused and every call would fail.
 *
 * A run in cache `replay` mode needs no endpoint and should skip this check.
 */
import { errorMessage, IwrError } from "../errors.ts";
import { log } from "../log/logger.ts";
import { redactString } from "../log/redact.ts";
import { resolveEndpoint } from "./endpoint.ts";
import { apiModelId, type ModelSpec } from "./spec.ts";

export interface PreflightOptions {
  /** Limit for the GET /models probe (default 5 s). */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

function listedModelIds(body: unknown): string[] | undefined {
  if (body === null || typeof body !== "object" || !("data" in body) || !Array.isArray(body.data)) return undefined;
  return body.data.flatMap((item: unknown) => (item && typeof item === "object" && "id" in item && typeof item.id === "string" ? [item.id] : []));
}

export async function preflightModel(spec: ModelSpec, options: PreflightOptions = {}): Promise<void> {
  const logger = log("models");
  const endpoint = resolveEndpoint(spec, options.env);
  const timeoutMs = options.timeoutMs ?? 5_000;
  const url = `${endpoint.baseURL.replace(/\/+$/, "")}/models`;
  let response: Response;
  try {
    response = await fetch(url, {
      headers: endpoint.keyless ? {} : { authorization: `Bearer ${endpoint.apiKey}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
    const reason = error instanceof Error && error.name === "TimeoutError" ? `no answer within ${timeoutMs} ms` : `${errorMessage(error)}${cause}`;
    const source = spec.baseURL ? "baseURL in the model settings" : spec.baseURLEnv;
    throw new IwrError(
      "MODEL",
      `model '${spec.name}': endpoint ${endpoint.displayURL} is not reachable (${redactString(reason)}); is the server running, and is ${source} right?`,
      {
        model: spec.name,
        endpoint: endpoint.displayURL,
      },
    );
  }
  if (response.status === 401) {
    throw new IwrError("MODEL", `model '${spec.name}': endpoint ${endpoint.displayURL} refused the API key from ${spec.apiKeyEnv} (HTTP 401)`, {
      model: spec.name,
      endpoint: endpoint.displayURL,
    });
  }
  if (!response.ok) {
    if (response.status >= 500) logger.warn(`${endpoint.displayURL}/models answered HTTP ${response.status}; going on, the chat endpoint may still work`);
    await response.body?.cancel();
    return;
  }
  const ids = listedModelIds(await response.json().catch(() => undefined));
  // Gateways often serve names they do not list, so a missing id is a warning only.
  if (ids && ids.length > 0 && !ids.includes(apiModelId(spec))) {
    logger.warn(`${endpoint.displayURL} does not list model '${apiModelId(spec)}' (it lists ${ids.slice(0, 8).join(", ")}${ids.length > 8 ? ", ..." : ""})`);
  }
}
