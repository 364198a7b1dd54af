/**
 * One concurrency limit per endpoint, shared by every client in the process that
 * talks to it: three experiments on the same gateway together stay within what
 * the gateway allows. When specs sharing an endpoint ask for different limits, the
 * lowest wins (a rate limit belongs to the endpoint, not to one model's settings).
 */
import pLimit, { type LimitFunction } from "p-limit";
import { displayURL } from "./endpoint.ts";

const limiters = new Map<string, LimitFunction>();

export function endpointLimiter(baseURL: string, concurrency: number): LimitFunction {
  const key = displayURL(baseURL);
  const existing = limiters.get(key);
  if (existing) {
    if (concurrency < existing.concurrency) existing.concurrency = concurrency;
    return existing;
  }
  const created = pLimit(concurrency);
  limiters.set(key, created);
  return created;
}
