import cors from "@fastify/cors";
import type { FastifyInstance } from "fastify";

/**
 * Which browser origins may call the queue: exact origins ("https://app.example"), and "loopback" for
 * any port of localhost, 127.0.0.1 or [::1] (a front end on a dev server next to a dev stack). None
 * (the default) answers no CORS headers, so browsers refuse every cross-origin call: an operator names
 * the origins of their app.
 */
export type CorsOrigins = readonly string[];

const LOOPBACK_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/;

/** The headers a browser client reads from our answers (CORS hides any other but the safelisted few). */
const EXPOSED_HEADERS = ["etag", "location", "retry-after"];

export class CorsOriginError extends Error {
  override name = "CorsOriginError";
}

/** Checks a list of origins: each is scheme://host[:port], as a browser sends it in Origin. */
export function checkCorsOrigins(origins: CorsOrigins): CorsOrigins {
  for (const origin of origins) {
    if (origin === "loopback") continue;
    let parsed: URL | null = null;
    try {
      parsed = new URL(origin);
    } catch {}
    if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin) {
      throw new CorsOriginError(`CORS origin ${JSON.stringify(origin)} is not an origin: give scheme://host[:port], like https://app.example, or "loopback"`);
    }
  }
  return origins;
}

/** Registers @fastify/cors for these origins: preflights answered, the allowed origin echoed, never "*". */
export async function registerCors(app: FastifyInstance, origins: CorsOrigins | undefined): Promise<void> {
  if (origins === undefined || origins.length === 0) return;
  const allowed = new Set(checkCorsOrigins(origins));
  const allow = (origin: string) => allowed.has(origin) || (allowed.has("loopback") && LOOPBACK_ORIGIN.test(origin));
  await app.register(cors, {
    origin: (origin, callback) => callback(null, origin !== undefined && allow(origin)),
    methods: ["GET", "HEAD", "POST"],
    exposedHeaders: EXPOSED_HEADERS,
    // Preflights are cached by the browser for 10 minutes: an app's every POST is not two requests.
    maxAge: 600,
  });
}
