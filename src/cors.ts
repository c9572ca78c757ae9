import cors from "@fastify/cors";
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";
import { QueueDevstackError } from "./errors/index.ts";

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

export class CorsOriginError extends QueueDevstackError {
  override name = "CorsOriginError";
  readonly code = "cors_origin_invalid";
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

type OnRequest = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

/**
 * CORS for the allowed origins, by @fastify/cors: preflights answered, the allowed origin echoed, never "*".
 * Its hook runs only for a request with an Origin: for any other (an OPTIONS without one included) it
 * always answers the same, `Vary: Origin` (a cache must not serve it to a page), which `headers` gives
 * once for the caller's one onRequest hook to set with the rest. Run on every request, the plugin cost a
 * read 1.06x of a bare route's CPU alone in bench:load's floor (docs/benchmarks.md): its options copied,
 * the route's options built twice, two closures, the Vary header looked up.
 */
export interface Cors {
  /** What every answer carries for CORS. */
  readonly headers: Readonly<Record<string, string>>;
  /** @fastify/cors's onRequest hook, for a request with an Origin; register() must have run. */
  readonly onRequest: OnRequest;
  /** Registers @fastify/cors, after the caller's onRequest hook (its preflight route needs that hook). */
  register(app: FastifyInstance): Promise<void>;
}

/** The CORS of these origins, or null for none (no CORS headers at all). */
export function corsFor(origins: CorsOrigins | undefined): Cors | null {
  if (origins === undefined || origins.length === 0) return null;
  const allowed = new Set(checkCorsOrigins(origins));
  const allow = (origin: string) => allowed.has(origin) || (allowed.has("loopback") && LOOPBACK_ORIGIN.test(origin));
  let pluginHook: OnRequest | undefined;
  return {
    headers: { vary: "Origin" },
    onRequest(request, reply, done) {
      (pluginHook as OnRequest)(request, reply, done);
    },
    // In a scope of its own: the plugin's one onRequest hook is taken instead of added (the caller's hook
    // calls it), and its OPTIONS * route (preflights) lives there, under the caller's hooks.
    async register(app) {
      await app.register(async (scope) => {
        const addHook = scope.addHook.bind(scope) as (name: string, hook: unknown) => FastifyInstance;
        (scope as { addHook: unknown }).addHook = (name: string, hook: unknown) => {
          if (name !== "onRequest" || pluginHook !== undefined) return addHook(name, hook);
          pluginHook = hook as OnRequest;
          return scope;
        };
        await scope.register(cors, {
          origin: (origin, callback) => callback(null, origin !== undefined && allow(origin)),
          methods: ["GET", "HEAD", "POST"],
          exposedHeaders: EXPOSED_HEADERS,
          // Preflights are cached by the browser for 10 minutes: an app's every POST is not two requests.
          maxAge: 600,
        });
      });
      if (pluginHook === undefined) throw new Error("@fastify/cors added no onRequest hook");
    },
  };
}
