import { createServer, type Socket } from "node:net";
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

// The head subscription opens with the first operation. A WebSocket endpoint that takes the connection
// and never answers its handshake (a stalled proxy in front of a node) leaves it opening for good: the
// runtime's close must not wait on it (a SIGTERM's exit waits on that close), and the poll relays meanwhile.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
withQueueStack({ options: { proofs: "dev" } }, (started) => ({ stack, pool } = started));

const sockets = new Set<Socket>();
const stalled = createServer((socket) => {
  sockets.add(socket);
  socket.on("close", () => sockets.delete(socket)).on("error", () => {});
});
beforeAll(() => new Promise<void>((resolve) => stalled.listen(0, "127.0.0.1", resolve)));
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => stalled.close(resolve));
});

describe("the runtime's head subscription, its handshake never answered", () => {
  it("relays by the poll, and the runtime closes", async () => {
    const wsRpcUrl = `ws://127.0.0.1:${(stalled.address() as AddressInfo).port}`;
    const app = await buildQueueRuntime({ manifest: manifestBytes(stack.manifest), rpcUrl: stack.rpcUrl, wsRpcUrl, artifactsDir: CIRCUIT_BUILD_DIR, relayerPrivateKey: RELAYER_KEY, rateLimit: false });
    let closing: Promise<unknown> | undefined;
    try {
      const url = await app.listen({ port: 0, host: "127.0.0.1" });
      const queue = createQueueClient({ baseUrl: url, reviewed: reviewedFrom(stack.manifest) });
      const { config, transaction } = await provenSend(stack, pool, queue, 2);
      const { id } = await queue.submit("send", config, transaction);
      await pollUntil(() => queue.status("send", id), (op) => op.state === "confirmed");
      expect(sockets.size).toBe(1); // the subscription's socket, its handshake unanswered
      closing = app.close();
      // Not a speed measure: before the fix this close never resolved (the handshake has no timeout).
      expect(await Promise.race([closing.then(() => "closed"), new Promise((resolve) => setTimeout(resolve, 10_000, "still closing"))])).toBe("closed");
    } finally {
      if (!closing) await app.close();
    }
  });
});
