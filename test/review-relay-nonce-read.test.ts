import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueueClient, reviewedFrom } from "../harness/client/index.ts";
import { CIRCUIT_BUILD_DIR, manifestBytes } from "../harness/deployment/index.ts";
import type { DevStack } from "../harness/index.ts";
import { relayControl } from "../src/relay/control.ts";
import { buildQueueRuntime } from "../src/server.ts";
import { clients, RELAYER_KEY } from "./support/chain.ts";
import { provenSend, type poolFixture } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { rpc } from "./support/rpc.ts";
import { pollUntil, relayerNonce } from "./support/runtime-process.ts";

// Operations prepared together share one read of the relayer's pending nonce. A read started before the
// harness paused the engine and reverted chain and store must not be handed to an operation prepared
// after the resume: its count is the reverted chain's, and a nonce above the chain's leaves a gap that
// no transaction of the relayer is ever mined past.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
withQueueStack({ options: { proofs: "dev" } }, (started) => ({ stack, pool } = started));

/** A proxy to anvil that, when armed, holds the answer to the next call reading a pending nonce. */
let held: { release: () => void } | null = null;
let armed = false;
let heldSeen: () => void = () => {};
const proxy: Server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c)).on("end", async () => {
    const body = Buffer.concat(chunks).toString("utf8");
    const calls = [JSON.parse(body) as { method: string; params?: unknown[] }].flat();
    const hold = armed && calls.some((c) => c.method === "eth_getTransactionCount" && c.params?.[1] === "pending");
    if (hold) armed = false;
    const answer = await (await fetch(stack.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body })).text();
    if (hold) {
      await new Promise<void>((resolve) => {
        held = { release: resolve };
        heldSeen();
      });
    }
    res.writeHead(200, { "content-type": "application/json" }).end(answer);
  });
});
beforeAll(() => new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve)));
afterAll(async () => {
  held?.release();
  proxy.closeAllConnections();
  await new Promise((resolve) => proxy.close(resolve));
});

describe("the engine's shared pending-nonce read", () => {
  it("is not carried across a pause that reverted chain and store", async () => {
    const rpcUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const app = await buildQueueRuntime({ manifest: manifestBytes(stack.manifest), rpcUrl, artifactsDir: CIRCUIT_BUILD_DIR, relayerPrivateKey: RELAYER_KEY, rateLimit: false });
    try {
      const url = await app.listen({ port: 0, host: "127.0.0.1" });
      const queue = createQueueClient({ baseUrl: url, reviewed: reviewedFrom(stack.manifest) });
      const control = relayControl(app);
      if (!control) throw new Error("no relay control");
      // Both proven before the snapshot: their deposits stay mined after the revert.
      const first = await provenSend(stack, pool, queue, 2);
      const second = await provenSend(stack, pool, queue, 3);
      const snapshot = await rpc<string>(stack.rpcUrl, "evm_snapshot");
      const checkpoint = control.checkpoint();
      const nonceAtSnapshot = await relayerNonce(stack);

      // The relayer key used outside the runtime: the chain's count moves one above the snapshot's.
      const relayer = clients(stack.rpcUrl, RELAYER_KEY);
      await relayer.public.waitForTransactionReceipt({ hash: await relayer.wallet.sendTransaction({ to: relayer.account.address, value: 0n }) });
      expect(await relayerNonce(stack)).toBe(nonceAtSnapshot + 1);

      // An operation's preparation reads the pending count (held in flight), then the harness's revert.
      const seen = new Promise<void>((resolve) => (heldSeen = resolve));
      armed = true;
      await queue.submit("send", first.config, first.transaction);
      await seen;
      await control.pause();
      await rpc(stack.rpcUrl, "evm_revert", [snapshot]);
      control.restore(checkpoint);
      control.resume();
      expect(await relayerNonce(stack)).toBe(nonceAtSnapshot);

      // Prepared after the resume: it must read the reverted chain's count, not take the held one.
      const { id } = await queue.submit("send", second.config, second.transaction);
      held?.release();
      const done = await pollUntil(() => queue.status("send", id), (op) => op.state === "confirmed" || op.state === "expired" || op.state === "rejected", 200).catch(async () => queue.status("send", id));
      expect([done.state, done.history.map((h) => h.detail ?? "").join("; ")]).toEqual(["confirmed", expect.stringContaining(`nonce ${nonceAtSnapshot},`)]);
      expect(await relayerNonce(stack)).toBe(nonceAtSnapshot + 1);
    } finally {
      await app.close();
    }
  });
});
