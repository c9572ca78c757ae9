import type { IncomingMessage, ServerResponse } from "node:http";
import helmet, { type HelmetOptions } from "helmet";
import fastifyRateLimit from "@fastify/rate-limit";
import type { FastifyInstance } from "fastify";
import { clientKey } from "./client-address.ts";
import { ProblemError } from "./problem.ts";
import { READ_METHODS } from "./paths.ts";

/** Requests per client (by IP, an IPv6 one by its /64: clientKey) per window on the routes that change something: relays, quotes, finalizes. */
export interface RateLimit {
  max: number;
  timeWindowMs: number;
}

/** An operator's runtime: a wallet submits a few operations a minute; a flood is refused early. */
export const DEFAULT_RATE_LIMIT: RateLimit = { max: 60, timeWindowMs: 60_000 };

/**
 * Security headers on every answer (helmet's: a strict CSP for an API that serves JSON, no framing, no
 * sniffing), and a per-client rate limit on mutating routes (429 rate_limited with Retry-After).
 * Reads (config, status, proof files, health) are never limited: clients poll them.
 */
const HELMET: HelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"] } },
  // Browsers call this API from other origins (CORS decides which); proof files are fetched the same way.
  crossOriginResourcePolicy: { policy: "cross-origin" },
};

/**
 * helmet's headers, computed once: they do not depend on the request (no CSP nonces here), and
 * @fastify/helmet rebuilds helmet's middleware on every request (a third of a small read's time).
 */
function helmetHeaders(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const res = { setHeader: (name: string, value: string) => void (headers[name.toLowerCase()] = String(value)), removeHeader: (name: string) => void delete headers[name.toLowerCase()] };
  helmet(options)({} as IncomingMessage, res as unknown as ServerResponse, () => {});
  return headers;
}

/** The security headers every answer carries; app.ts has the problem handlers' onRequest hook set them. */
export function securityHeaders(): Readonly<Record<string, string>> {
  return helmetHeaders(HELMET);
}


/** The per-client rate limit on mutating routes. */
export async function registerProtection(app: FastifyInstance, rateLimit: RateLimit | false): Promise<void> {
  if (rateLimit === false) return;
  // Before the plugin's own onRoute hook: a read route gets no rate-limit hook at all (the allowList
  // below still answers for any other), so a poll pays nothing for a limit it is never subject to.
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.every((method) => READ_METHODS.has(method))) route.config = { ...route.config, rateLimit: false };
  });
  await app.register(fastifyRateLimit, {
    global: true,
    max: rateLimit.max,
    timeWindow: rateLimit.timeWindowMs,
    keyGenerator: (request) => clientKey(request.ip),
    allowList: (request) => READ_METHODS.has(request.method),
    errorResponseBuilder: (_request, context) =>
      new ProblemError("rate_limited", `more than ${context.max} requests in ${Math.round(rateLimit.timeWindowMs / 1000)} s from this client; retry in ${context.after}`, {
        headers: { "retry-after": String(Math.max(1, Math.ceil(context.ttl / 1000))) },
      }),
  });
}
