import { createServer, connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueueClient, reviewedFrom } from "../harness/client/index.ts";
import { CIRCUIT_BUILD_DIR, manifestBytes } from "../harness/deployment/index.ts";
import type { DevStack } from "../harness/index.ts";
import { buildQueueRuntime } from "../src/server.ts";
import { RELAYER_KEY } from "./support/chain.ts";
import { provenSend, type poolFixture } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { pollUntil } from "./support/runtime-process.ts";

// The runtime's newHeads subscription opens with the first operation that moves, not at start: an idle
// runtime holds no socket (issue 32). The WebSocket URL is a TCP relay to anvil that counts connections.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
withQueueStack({ options: { proofs: "dev" } }, (started) => ({ stack, pool } = started));

const sockets = new Set<Socket>();
let connections = 0;
const relay = createServer((client) => {
  connections++;
  const upstream = connect(Number(new URL(stack.rpcUrl).port), "127.0.0.1");
  for (const socket of [client, upstream]) {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket)).on("error", () => {});
  }
  client.pipe(upstream).pipe(client);
});
beforeAll(() => new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve)));
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => relay.close(resolve));
});

describe("the runtime's head subscription", () => {
  it("is not opened by a start, and is opened by the first operation", async () => {
    const wsRpcUrl = `ws://127.0.0.1:${(relay.address() as AddressInfo).port}`;
    const app = await buildQueueRuntime({ manifest: manifestBytes(stack.manifest), rpcUrl: stack.rpcUrl, wsRpcUrl, artifactsDir: CIRCUIT_BUILD_DIR, relayerPrivateKey: RELAYER_KEY, rateLimit: false });
    try {
      const url = await app.listen({ port: 0, host: "127.0.0.1" });
      const queue = createQueueClient({ baseUrl: url, reviewed: reviewedFrom(stack.manifest) });
      expect((await queue.beforePrepare()).poolAddress).toBe(stack.manifest.poolAddress);
      await new Promise((r) => setTimeout(r, 300)); // the engine's first ticks, the head's first read
      expect(connections).toBe(0);

      const { config, transaction } = await provenSend(stack, pool, queue, 2);
      const { id } = await queue.submit("send", config, transaction);
      await pollUntil(() => queue.status("send", id), (op) => op.state === "confirmed");
      expect(connections).toBe(1);
    } finally {
      await app.close();
    }
  });
});
