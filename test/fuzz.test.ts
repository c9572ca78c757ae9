import { Agent, request } from "node:http";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { STACK_PROBLEM_STATUS as PROBLEM_STATUS } from "../harness/dev/problems/index.ts";
import { rpc } from "./support/rpc.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// Bad input, generated from the served OpenAPI document: every route it lists (but the dev-only ones)
// gets requests built from its own schemas and then broken — wrong types, huge numbers, deep nesting,
// oversized and truncated bodies, bad hex, wrong content types, duplicate and __proto__/constructor
// keys, unicode, injection strings. A new route is covered without new code. FUZZ_SEED reproduces a run,
// FUZZ_RUNS sets its size.
const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CONCURRENCY = 8;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let stack: DevStack;
let doc: Json;
withQueueStack({ client: false, timeout: 120_000 }, async (started) => {
  ({ stack } = started);
  doc = (await (await fetch(`${stack.queueUrl}/api/queue/openapi.json`)).json()) as Json;
});

interface Route {
  method: string;
  path: string;
  body: Json | null;
  query: string[];
}

const JUNK = [
  "", " ", "0x", "0xZZ", `0x${"f".repeat(63)}`, `0x${"0".repeat(4_000)}`, "1e400", "-1", "-0", "1.5", "NaN", "Infinity", "9".repeat(90), "\u0000", "\ud800",
  "💥🔥", "\u202eevil", "' OR '1'='1' --", "${jndi:ldap://x/a}", "<script>alert(1)</script>", "../../etc/passwd", "%00", "__proto__", "constructor", "op_", "qt_",
];
const scalar = fc.oneof(fc.constantFrom(...JUNK), fc.string(), fc.string({ unit: "grapheme" }), fc.integer(), fc.double(), fc.bigInt().map(String), fc.boolean(), fc.constant(null));
const nested = (depth: number): unknown => (depth === 0 ? 1 : [nested(depth - 1)]);
const anything: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 2, arbitrary: fc.array(scalar, { maxLength: 6 }) },
  { weight: 2, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), scalar, { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.integer({ min: 20, max: 3_000 }).map(nested) },
);

/**
 * A value shaped by the schema nearly always, anything once in a while: a body has a field or two
 * broken, and some get past validation whole, into the checks behind it.
 */
function valueFor(schema: Json | undefined, depth: number): fc.Arbitrary<unknown> {
  const resolved = resolve(schema);
  return fc.oneof({ weight: 30, arbitrary: shaped(resolved, depth) }, { weight: 1, arbitrary: anything });
}
function shaped(schema: Json, depth: number): fc.Arbitrary<unknown> {
  if (depth > 6) return anything;
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const alternatives = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((s) => valueFor(s, depth + 1)));
  if (schema.type === "object" || schema.properties) {
    const properties = (schema.properties ?? {}) as Record<string, Json>;
    // Required members nearly always there; one goes missing now and then.
    const record = fc.record(Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, valueFor(s, depth + 1)])), { requiredKeys: (schema.required ?? []) as string[] });
    return fc.oneof({ weight: 10, arbitrary: record }, { weight: 1, arbitrary: fc.record(Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, valueFor(s, depth + 1)])), { requiredKeys: [] }) });
  }
  if (schema.type === "array") {
    const items = Array.isArray(schema.prefixItems) ? (schema.prefixItems as Json[]) : null;
    if (items) return fc.tuple(...items.map((s) => valueFor(s, depth + 1)));
    return fc.array(valueFor(schema.items as Json, depth + 1), { minLength: Math.min(schema.minItems ?? 0, 16), maxLength: Math.min(schema.maxItems ?? 12, 16) });
  }
  if (schema.type === "string" && typeof schema.pattern === "string") {
    try {
      // Hex in lowercase: a mixed-case address must carry its EIP-55 checksum, which no pattern says.
      const hex = /0-9a-fA-F|a-fA-F|0-9a-f/.test(schema.pattern);
      return fc.stringMatching(new RegExp(schema.pattern)).map((v) => (hex ? v.toLowerCase() : v));
    } catch {
      return fc.string();
    }
  }
  if (schema.type === "string") return fc.string();
  if (schema.type === "integer") {
    const min = Math.max(Number(schema.minimum ?? -(2 ** 31)), Number.MIN_SAFE_INTEGER);
    const max = Math.min(Number(schema.maximum ?? 2 ** 31), Number.MAX_SAFE_INTEGER);
    return fc.oneof({ weight: 10, arbitrary: fc.integer({ min, max }) }, { weight: 1, arbitrary: fc.constantFrom(2 ** 53, -(2 ** 63), 1e300, 0.5) });
  }
  if (schema.type === "number") return fc.double();
  if (schema.type === "boolean") return fc.boolean();
  return anything;
}
function resolve(schema: Json | undefined, seen = 0): Json {
  if (!schema || typeof schema !== "object") return {};
  if (typeof schema.$ref === "string" && seen < 10) return resolve(doc.components?.schemas?.[schema.$ref.split("/").at(-1) as string], seen + 1);
  return schema;
}

/** How the body travels: as JSON, or broken on the way. */
const MUTATIONS = ["json", "json", "json", "duplicate-key", "proto", "constructor", "truncated", "oversized", "not-json"] as const;
const CONTENT_TYPES = ["application/json", "application/json", "application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", null];
const QUERY_VALUES = fc.oneof(fc.constantFrom(...JUNK, "op_" + "0".repeat(32)), fc.string(), fc.string({ unit: "grapheme", maxLength: 300 }));

function bodyText(body: unknown, mutation: (typeof MUTATIONS)[number]): string {
  const text = JSON.stringify(body) ?? "null";
  const object = text.startsWith("{") && text !== "{}";
  switch (mutation) {
    case "duplicate-key":
      return object ? `{${text.slice(1, text.indexOf(":") + 1)}"duplicate",${text.slice(1)}` : text;
    case "proto":
      return object ? `{"__proto__":{"polluted":"yes"},${text.slice(1)}` : `{"__proto__":{"polluted":"yes"}}`;
    case "constructor":
      return object ? `{"constructor":{"prototype":{"polluted":"yes"}},${text.slice(1)}` : `{"constructor":{"prototype":{"polluted":"yes"}}}`;
    case "truncated":
      return text.slice(0, Math.max(1, Math.floor(text.length / 2)));
    case "oversized":
      return JSON.stringify({ pad: "x".repeat(70 * 1024), body });
    case "not-json":
      return `id=1&${text}`;
    default:
      return text;
  }
}

/**
 * One request by node:http, as fetch would send it (the URL normalized by WHATWG URL, a string body as
 * UTF-8, text/plain when no type is given): fetch's client took 2.4 CPU-seconds more for the 10,000,
 * on a run that is CPU-bound (issue 42, item 7).
 */
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
afterAll(() => agent.destroy());
function send(url: string, method: string, body: string | undefined, contentType: string | null): Promise<{ status: number; type: string; text: string }> {
  const { hostname, port, pathname, search } = new URL(url);
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = contentType ?? "text/plain;charset=UTF-8";
  return new Promise((resolve, reject) => {
    const req = request({ agent, hostname, port, method, path: pathname + search, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"] ?? ""), text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body === undefined ? undefined : Buffer.from(body, "utf8"));
  });
}

/** encodeURIComponent, for strings with lone surrogates too (they travel as U+FFFD). */
const encode = (s: string) => encodeURIComponent((s as string & { toWellFormed(): string }).toWellFormed());

const requestFor = (route: Route) =>
  fc.record({
    body: route.body ? valueFor(route.body, 0) : fc.option(anything, { nil: undefined }),
    mutation: fc.constantFrom(...MUTATIONS),
    contentType: fc.constantFrom(...CONTENT_TYPES),
    query: fc.array(fc.tuple(fc.oneof(fc.constantFrom(...route.query, "id", "__proto__", "x[y]"), fc.string({ maxLength: 6 })), QUERY_VALUES), { maxLength: 3 }),
    pathValue: fc.oneof(fc.constantFrom("..%2F..%2Fetc%2Fpasswd", "%00", "a".repeat(300), "transaction.wasm", "%E2%80%AE"), fc.string({ maxLength: 40 }).map(encode)),
  });

describe("fuzzing every route from the OpenAPI document", () => {
  it(`${RUNS} malformed and adversarial requests: no 5xx (the chain is healthy: not even a 503), always a problem with a stable code, nothing changes, the server stays up`, async () => {
    const routes: Route[] = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
      Object.entries(item as Json)
        .filter(([method]) => ["get", "post"].includes(method) && !path.startsWith("/api/dev/"))
        .map(([method, operation]) => ({
          method: method.toUpperCase(),
          path,
          body: (operation as Json).requestBody?.content?.["application/json"]?.schema ?? null,
          query: (((operation as Json).parameters ?? []) as Json[]).filter((p) => p.in === "query").map((p) => String(p.name)),
        })),
    );
    expect(routes.length).toBeGreaterThanOrEqual(10);
    console.log(`fuzz: seed ${SEED} (FUZZ_SEED=${SEED} reproduces), ${RUNS} requests over ${routes.length} routes`);
    let t = performance.now();
    // One arbitrary per route, built once (building one compiles its patterns).
    const samples = fc.sample(fc.oneof(...routes.map((route) => requestFor(route).map((r) => ({ route, ...r })))), { numRuns: RUNS, seed: SEED });

    console.log(`fuzz: generated in ${(performance.now() - t).toFixed(0)} ms`);
    t = performance.now();
    const since = new Date().toISOString();
    const before = {
      head: await rpc<string>(stack.rpcUrl, "eth_blockNumber"),
      nonce: await rpc<string>(stack.rpcUrl, "eth_getTransactionCount", [stack.relayer.address, "latest"]),
    };
    const outcomes = new Map<string, number>();
    const failures: string[] = [];

    const fuzz = async (i: number) => {
      const sample = samples[i] as (typeof samples)[number];
      const { route } = sample;
      const path = route.path.replace(/\{[^}]+\}/g, sample.pathValue);
      const query = sample.query.map(([k, v]) => `${encode(k)}=${encode(v)}`).join("&");
      const url = `${stack.queueUrl}${path}${query ? `?${query}` : ""}`;
      const body = route.method === "POST" && sample.body !== undefined ? bodyText(sample.body, sample.mutation) : undefined;
      const where = `#${i} ${route.method} ${url.slice(0, 200)} [${sample.mutation}, ${sample.contentType}]`;
      let answer: Awaited<ReturnType<typeof send>>;
      try {
        answer = await send(url, route.method, body, sample.contentType);
      } catch (error) {
        failures.push(`${where}: no answer (${(error as Error).message})`);
        return;
      }
      const { status, type, text } = answer;
      let code = "";
      if (status >= 400) {
        try {
          const problem = JSON.parse(text) as { code?: string; status?: number };
          code = String(problem.code);
          if (!type.startsWith("application/problem+json")) failures.push(`${where}: ${status} as ${type}`);
          if (!(code in PROBLEM_STATUS) || PROBLEM_STATUS[code as keyof typeof PROBLEM_STATUS] !== status || problem.status !== status) failures.push(`${where}: ${status} with code ${code}`);
        } catch {
          failures.push(`${where}: ${status} is not a problem: ${text.slice(0, 200)}`);
        }
      }
      // The chain answers all along: a 503 chain_unavailable here would be bad input taken for an outage.
      if (status >= 500) failures.push(`${where}: ${status} ${code} ${text.slice(0, 300)}`);
      if (route.method === "POST" && status < 400) failures.push(`${where}: a malformed request was accepted (${status})`);
      const key = `${route.method} ${route.path} ${status}${code ? ` ${code}` : ""}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    };
    for (let next = 0; next < samples.length; ) {
      const batch = [];
      for (let k = 0; k < CONCURRENCY && next < samples.length; k++) batch.push(fuzz(next++));
      await Promise.all(batch);
    }

    const byStatus = new Map<string, number>();
    for (const [key, n] of outcomes) {
      const status = key.split(" ")[2] as string;
      byStatus.set(status, (byStatus.get(status) ?? 0) + n);
    }
    console.log(`fuzz: sent in ${(performance.now() - t).toFixed(0)} ms`);
    console.log(`fuzz: outcomes by status ${JSON.stringify(Object.fromEntries([...byStatus].sort()))}`);
    expect(failures.slice(0, 20), `seed ${SEED}: ${failures.length} failure(s)`).toEqual([]);

    // Nothing changed: no operation, no transaction, no block, no polluted prototype; still serving.
    expect(stack.diagnostics(since).operations).toEqual([]);
    expect(await rpc<string>(stack.rpcUrl, "eth_getTransactionCount", [stack.relayer.address, "latest"])).toBe(before.nonce);
    expect(await rpc<string>(stack.rpcUrl, "eth_blockNumber")).toBe(before.head);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await fetch(`${stack.queueUrl}/api/queue/config`)).status).toBe(200);
  }, 300_000);
});
