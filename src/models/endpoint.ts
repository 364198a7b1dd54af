/**
 * Where a spec's requests go and with which key, read from the environment at the
 * moment of the first real call (a replay from the cache needs neither).
 *
 * Endpoint: `baseURL` from the spec, else the variable `baseURLEnv` names, else (only
 * for the harness's own OPENAI_BASE_URL convention) OpenAI's public endpoint.
 * Key: the variable `apiKeyEnv` names. It may be absent when the spec says
 * `apiKeyEnv: none`, or when the endpoint is on this machine (127.0.0.1, localhost,
 * ::1), where vLLM and Ollama run without keys by default.
 */
import { IwrError } from "../errors.ts";
import { registerSecret } from "../log/redact.ts";
import { DEFAULT_BASE_URL_ENV, type ModelSpec, NO_API_KEY } from "./spec.ts";

export const OPENAI_PUBLIC_BASE_URL = "https://api.openai.com/v1";
/** Sent when an endpoint takes no key: the openai SDK refuses to start without one. */
export const PLACEHOLDER_API_KEY = "iwr-no-key";

export interface ResolvedEndpoint {
  baseURL: string;
  /** The endpoint without user:password or query, for messages and logs. */
  displayURL: string;
  apiKey: string;
  /** True when no real key is sent. */
  keyless: boolean;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

export function isLoopbackURL(url: string): boolean {
  try {
    const host = new URL(url).hostname.toLowerCase();
    return LOOPBACK_HOSTS.has(host) || host.startsWith("127.");
  } catch {
    return false;
  }
}

/** The URL without credentials or query string (which some gateways use for keys). */
export function displayURL(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/$/, "")}`;
  } catch {
    return "<unparsable URL>";
  }
}

/** The spec as results may show it: an endpoint without credentials or query string. */
export function publicModelSpec(spec: ModelSpec): Record<string, unknown> {
  return { ...spec, ...(spec.baseURL ? { baseURL: displayURL(spec.baseURL) } : {}) };
}

/** Credentials embedded in a URL are secrets too: the logger masks them from now on. */
function registerURLSecrets(url: string): void {
  try {
    const parsed = new URL(url);
    registerSecret(parsed.password ? decodeURIComponent(parsed.password) : undefined);
    for (const [, value] of parsed.searchParams) registerSecret(value);
  } catch {
    // An unparsable URL is reported by the caller.
  }
}

export function resolveBaseURL(spec: ModelSpec, env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env[spec.baseURLEnv];
  const baseURL = spec.baseURL ?? (fromEnv ? fromEnv : spec.baseURLEnv === DEFAULT_BASE_URL_ENV ? OPENAI_PUBLIC_BASE_URL : undefined);
  if (baseURL === undefined) {
    throw new IwrError(
      "MODEL",
      `model '${spec.name}' has no endpoint: set ${spec.baseURLEnv} (for example http://127.0.0.1:8000/v1 for vLLM) or give baseURL in its settings`,
      {
        model: spec.name,
        env: spec.baseURLEnv,
      },
    );
  }
  try {
    new URL(baseURL);
  } catch {
    throw new IwrError("MODEL", `model '${spec.name}': endpoint from ${spec.baseURL ? "baseURL" : spec.baseURLEnv} is not a URL`, { model: spec.name });
  }
  registerURLSecrets(baseURL);
  return baseURL;
}

export function resolveEndpoint(spec: ModelSpec, env: NodeJS.ProcessEnv = process.env): ResolvedEndpoint {
  const baseURL = resolveBaseURL(spec, env);
  const shown = displayURL(baseURL);
  if (spec.apiKeyEnv.toLowerCase() === NO_API_KEY) return { baseURL, displayURL: shown, apiKey: PLACEHOLDER_API_KEY, keyless: true };
  const apiKey = env[spec.apiKeyEnv];
  if (apiKey) {
    registerSecret(apiKey);
    return { baseURL, displayURL: shown, apiKey, keyless: false };
  }
  if (isLoopbackURL(baseURL)) return { baseURL, displayURL: shown, apiKey: PLACEHOLDER_API_KEY, keyless: true };
  throw new IwrError(
    "MODEL",
    `model '${spec.name}' needs an API key for ${shown}: set the environment variable ${spec.apiKeyEnv} ` +
      "(or set apiKeyEnv: none for an endpoint that takes no key)",
    { model: spec.name, env: spec.apiKeyEnv },
  );
}
