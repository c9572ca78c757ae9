import fastifyHelmet from "@fastify/helmet";
import fastifyRateLimit from "@fastify/rate-limit";
import type { FastifyInstance } from "fastify";
import { ProblemError } from "./problem.ts";

/** Requests per client (by IP) per window on the routes that change something: relays, quotes, finalizes. */
export interface RateLimit {
  max: number;
  timeWindowMs: number;
}

/** An operator's runtime: a wallet submits a few operations a minute; a flood is refused early. */
export const DEFAULT_RATE_LIMIT: RateLimit = { max: 60, timeWindowMs: 60_000 };

/**
 * Security headers on every answer (helmet: a strict CSP for an API that serves JSON, no framing, no
 * sniffing), and a per-client rate limit on mutating routes (429 rate_limited with Retry-After).
 * Reads (config, status, proof files, health) are never limited: clients poll them.
 */
export async function registerProtection(app: FastifyInstance, rateLimit: RateLimit | false): Promise<void> {
  await app.register(fastifyHelmet, {
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"] } },
    // Browsers call this API from other origins (CORS decides which); proof files are fetched the same way.
    crossOriginResourcePolicy: { policy: "cross-origin" },
  });
  if (rateLimit === false) return;
  await app.register(fastifyRateLimit, {
    global: true,
    max: rateLimit.max,
    timeWindow: rateLimit.timeWindowMs,
    allowList: (request) => request.method === "GET" || request.method === "HEAD" || request.method === "OPTIONS",
    errorResponseBuilder: (_request, context) =>
      new ProblemError("rate_limited", `more than ${context.max} requests in ${Math.round(rateLimit.timeWindowMs / 1000)} s from this client; retry in ${context.after}`, {
        headers: { "retry-after": String(Math.max(1, Math.ceil(context.ttl / 1000))) },
      }),
  });
}
