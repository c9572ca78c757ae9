import cors from "@fastify/cors";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, expect, it } from "vitest";
import { corsFor } from "../src/cors.ts";
import { installProblemHandlers } from "../src/errors.ts";
import { ProblemError } from "../src/problem.ts";
import { securityHeaders } from "../src/protection.ts";

// Issue 32, item 3: @fastify/cors's hook runs only for a request with an Origin or a preflight, from the
// runtime's one onRequest hook, and every other answer gets the Vary: Origin the plugin would have given
// it. Whatever a client sends, the answer is the one the plugin gives when its hook runs on every request.
const ORIGINS = ["loopback", "https://app.example"];

async function app(withPlugin: "every request" | "runtime"): Promise<FastifyInstance> {
  const app = Fastify();
  const known = new Map([
    ["/config", ["GET"]],
    ["/relay", ["POST"]],
  ]);
  if (withPlugin === "runtime") {
    const runtimeCors = corsFor(ORIGINS);
    installProblemHandlers(app, known, { ...securityHeaders(), ...runtimeCors?.headers }, runtimeCors);
    await runtimeCors?.register(app);
  } else {
    // What the runtime did before: the plugin registered as such, after the problems' hook.
    installProblemHandlers(app, known, securityHeaders());
    const allowed = new Set(ORIGINS);
    await app.register(cors, {
      origin: (origin, callback) => callback(null, origin !== undefined && (allowed.has(origin) || /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/.test(origin))),
      methods: ["GET", "HEAD", "POST"],
      exposedHeaders: ["etag", "location", "retry-after"],
      maxAge: 600,
    });
  }
  app.get("/config", (_request, reply) => void reply.header("etag", '"x"').send({ ok: true }));
  app.post("/relay", () => {
    throw new ProblemError("invalid_request", "no");
  });
  await app.ready();
  return app;
}

let reference: FastifyInstance;
let runtime: FastifyInstance;
beforeAll(async () => {
  [reference, runtime] = await Promise.all([app("every request"), app("runtime")]);
});
afterAll(async () => {
  await Promise.all([reference?.close(), runtime?.close()]);
});

const preflight = (origin: string | undefined, extra: Record<string, string> = {}) => ({
  method: "OPTIONS" as const,
  headers: { ...(origin === undefined ? {} : { origin }), "access-control-request-method": "POST", ...extra },
});

it("answers every request as @fastify/cors on every request does: same status, headers and body", async () => {
  const requests: Array<{ method: "GET" | "POST" | "OPTIONS" | "HEAD"; url: string; headers?: Record<string, string> }> = [];
  for (const url of ["/config", "/relay", "/nowhere"]) {
    for (const origin of [undefined, "http://localhost:5173", "https://app.example", "https://evil.example", "null"]) {
      const headers: Record<string, string> = origin === undefined ? {} : { origin };
      requests.push({ method: "GET", url, headers }, { method: "HEAD", url, headers }, { method: "POST", url, headers });
      requests.push({ url, ...preflight(origin) }, { url, ...preflight(origin, { "access-control-request-headers": "content-type,idempotency-key" }) });
      requests.push({ method: "OPTIONS", url, headers }); // no Access-Control-Request-Method: not a preflight
    }
  }
  for (const request of requests) {
    const [expected, actual] = await Promise.all([reference.inject(request), runtime.inject(request)]);
    const what = `${request.method} ${request.url} ${JSON.stringify(request.headers)}`;
    const { date: _a, ...expectedHeaders } = expected.headers;
    const { date: _b, ...actualHeaders } = actual.headers;
    expect({ status: actual.statusCode, headers: actualHeaders, body: actual.body }, what).toEqual({ status: expected.statusCode, headers: expectedHeaders, body: expected.body });
  }
  // The matrix holds what it is meant to: allowed, refused and absent origins, answered preflights.
  const allowed = await runtime.inject({ url: "/relay", ...preflight("http://localhost:5173") });
  expect(allowed.statusCode).toBe(204);
  expect(allowed.headers["access-control-allow-origin"]).toBe("http://localhost:5173");
  expect((await runtime.inject({ url: "/config" })).headers.vary).toBe("Origin");
  expect((await runtime.inject({ url: "/config", headers: { origin: "https://evil.example" } })).headers["access-control-allow-origin"]).toBeUndefined();
});

it("no origins: no CORS at all", () => {
  expect(corsFor(undefined)).toBeNull();
  expect(corsFor([])).toBeNull();
});
