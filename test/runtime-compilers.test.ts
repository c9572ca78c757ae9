import { createRequire } from "node:module";
import { expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// zod validates and serializes every route (its schemas are the one source of truth). Fastify's own
// compilers (ajv for validation, fast-json-stringify for serialization) would duplicate that work at
// every start, loading and compiling what no route uses (issue 32): they are never built.
let stack: DevStack;
withQueueStack({ client: false }, (started) => ({ stack } = started));

it("a stack answers through zod's compilers; Fastify's ajv and fast-json-stringify compilers are never loaded", async () => {
  const invalid = await fetch(`${stack.queueUrl}/api/queue/send-relay`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  expect(invalid.status).toBe(400);
  expect(((await invalid.json()) as { code: string }).code).toBe("invalid_request");
  const config = await fetch(`${stack.queueUrl}/api/queue/config`);
  expect(config.status).toBe(200);
  await config.arrayBuffer();
  const loaded = Object.keys(createRequire(import.meta.url).cache).filter((file) => /[\\/]node_modules[\\/](ajv|@fastify[\\/](ajv-compiler|fast-json-stringify-compiler))[\\/]/.test(file));
  expect(loaded).toEqual([]);
});
