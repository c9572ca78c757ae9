import { createServer, type Server } from "node:http";
import { readFile } from "node:fs/promises";
import { Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { CIRCUIT_BUILD_DIR } from "../harness/deployment/index.ts";
import type { DevStack } from "../harness/index.ts";
import { buildQueueRuntime } from "../src/server.ts";
import { BaseError, RpcRequestError } from "viem";
import { createChainClient } from "../src/chain/client.ts";
import { chainUnavailable } from "../src/admission/refusals.ts";
import { isTransportError } from "../src/chain/transport-error.ts";
import { RELAYER_KEY } from "./support/chain.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { unprovedSend } from "./support/unproved-send.ts";

// The runtime's chain goes away (through a proxy we can cut): answers are 503 chain_unavailable, never
// a 500 or a verdict on the request, and the RPC URL's key never reaches the log.
const KEY = "0123456789abcdef0123456789";
let stack: DevStack;
let proxy: Server;
let down = false;
let app: FastifyInstance;
let logs = "";

withQueueStack({ client: false }, async (started) => {
  ({ stack } = started);
  proxy = createServer(async (req, res) => {
    if (down) return res.destroy();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const upstream = await fetch(stack.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: Buffer.concat(chunks) });
    res.writeHead(upstream.status, { "content-type": "application/json" }).end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  const { port } = proxy.address() as { port: number };
  app = await buildQueueRuntime({
    manifest: await readFile(stack.manifestPath),
    rpcUrl: `http://127.0.0.1:${port}/v3/${KEY}`,
    artifactsDir: CIRCUIT_BUILD_DIR,
    relayerPrivateKey: RELAYER_KEY,
    store: ":memory:",
    logger: { level: "info", stream: new Writable({ write: (c, _e, done) => ((logs += c.toString()), done()) }) } as never,
  });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  proxy?.close();
});

describe("a node that answers, refusing the question", () => {
  it("is no outage: a JSON-RPC refusal of the request itself (-32602 invalid params, from anvil) is not chain_unavailable, a cut connection is", async () => {
    const chain = createChainClient(stack.rpcUrl, { timeoutMs: 3_000, retryCount: 0 });
    const refused = await chain.request({ method: "eth_getBlockByNumber", params: ["not a block", false] } as never).catch((error: unknown) => error);
    expect((refused as BaseError).walk((e) => e instanceof RpcRequestError)).toMatchObject({ code: -32602 });
    expect(isTransportError(refused)).toBe(false);
    expect(chainUnavailable(refused)).toBe(refused); // a 500: asking again would be refused again
    const cut = await createChainClient("http://127.0.0.1:9", { timeoutMs: 3_000, retryCount: 0 }).getBlockNumber().catch((error: unknown) => error);
    expect(chainUnavailable(cut)).toMatchObject({ code: "chain_unavailable", status: 503 });
  });
});

describe("when the chain does not answer", () => {
  it("relay submissions and asset reads are 503 chain_unavailable with Retry-After", async () => {
    const up = await app.inject({ method: "POST", url: "/api/queue/send-relay", payload: unprovedSend(stack) });
    // With the chain up, the request is judged by it: its made-up root comes first (the Pool checks it before the proof).
    expect(up.json().code).toBe("unknown_root");
    down = true;
    try {
      for (const res of [
        await app.inject({ method: "POST", url: "/api/queue/send-relay", payload: unprovedSend(stack) }),
        await app.inject({ method: "GET", url: "/api/queue/assets" }),
      ]) {
        expect(res.statusCode).toBe(503);
        expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
        expect(res.json().code).toBe("chain_unavailable");
        expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
        expect(res.body).not.toContain(KEY);
      }
    } finally {
      down = false;
    }
    expect(logs).not.toContain(KEY);
  });
});
