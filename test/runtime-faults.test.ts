import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { createQueueClient, reviewedFrom, type QueueClient } from "../harness/client/index.ts";
import { provenSend, type poolFixture } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { rpc } from "./support/rpc.ts";
import { pollUntil, relayerNonce, withRuntimeProcesses } from "./support/runtime-process.ts";

// The operator's runtime (its own process) through faults: SIGKILLed in every non-terminal state and
// started again on the same store, a long RPC outage, the relayer drained. Every accepted operation
// reaches a truthful state, none is sent twice, nothing is lost. It reaches the chain through the dev
// stack's fault proxy, which holds each state in place.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
withQueueStack({}, (started) => ({ stack, pool } = started));
const runtimes = withRuntimeProcesses("devstack-runtime-faults-");
let running: { url: string } | null = null;
afterEach(() => stack.faults.clear());

/** The runtime on the file's one store, started (again). */
async function start(extra: string[] = []): Promise<QueueClient> {
  const store = path.join(runtimes.dir, "queue.sqlite");
  running = await runtimes.start(stack, ["--store", store, "--rate-limit", "off", "--stuck-after-ms", "60000", "--rpc-timeout-ms", "20000", ...extra], { rpcUrl: stack.faults.rpcUrl });
  return createQueueClient({ baseUrl: running.url, reviewed: reviewedFrom(stack.manifest) });
}
const kill = () => runtimes.kill();

describe("the operator's runtime through faults", () => {
  for (const [state, fault] of [
    ["accepted", { kind: "timeout", methods: ["eth_getTransactionCount"] }], // its pre-signing reads never answer
    ["processing", { kind: "fail", methods: ["eth_getTransactionCount"] }], // its nonce cannot be read
    ["submitted", { kind: "fail", methods: ["eth_sendRawTransaction"] }], // signed and stored, the broadcast refused
  ] as const) {
    it(`SIGKILLed while ${state}: started again, the operation is confirmed, by one transaction`, async () => {
      const queue = await start();
      const { config, transaction } = await provenSend(stack, pool, queue, 2);
      const nonceBefore = await relayerNonce(stack);
      stack.faults.rpc(fault);
      const accepted = await queue.submit("send", config, transaction);
      const held = await pollUntil(() => queue.status("send", accepted.id), (op) => op.state === state);
      await new Promise((r) => setTimeout(r, 300)); // it stays there
      expect((await queue.status("send", held.id)).state).toBe(state);
      await kill();
      stack.faults.rpc(null);

      const again = await start();
      const done = await again.waitFor("send", held.id, { timeoutMs: 30_000 });
      expect(done.state).toBe("confirmed");
      expect(done.transactions).toHaveLength(1); // the stored bytes (submitted), or one new signature: never two
      expect(await relayerNonce(stack)).toBe(nonceBefore + 1);
      if (state === "submitted") expect(done.transactionHash).toBe(held.transactions[0]?.hash); // the stored bytes, broadcast again
    });
  }

  it("SIGKILLed while included (three confirmations wanted): started again, it counts on and is confirmed", async () => {
    const queue = await start(["--confirmations", "3"]);
    const { config, transaction } = await provenSend(stack, pool, queue, 3);
    const accepted = await queue.submit("send", config, transaction);
    const included = await pollUntil(() => queue.status("send", accepted.id), (op) => op.state === "included");
    await kill();
    await rpc(stack.rpcUrl, "anvil_mine", ["0x2"]);
    const again = await start(["--confirmations", "3"]);
    const done = await again.waitFor("send", included.id, { timeoutMs: 30_000 });
    expect(done).toMatchObject({ state: "confirmed", transactionHash: included.transactionHash });
  });

  it("through a long RPC outage: accepted, status still answered, not ready; confirmed once the chain is back, by one transaction", async () => {
    const queue = await start();
    const { config, transaction } = await provenSend(stack, pool, queue, 4);
    const nonceBefore = await relayerNonce(stack);
    stack.faults.rpc({ kind: "fail", methods: ["eth_getTransactionCount", "eth_sendRawTransaction"] }); // the engine cannot go on
    const accepted = await queue.submit("send", config, transaction);
    stack.faults.rpc({ kind: "fail", forMs: 6_000 }); // then nothing answers at all, for a while
    for (let i = 0; i < 10; i++) {
      expect(["accepted", "processing"]).toContain((await queue.status("send", accepted.id)).state);
      await new Promise((r) => setTimeout(r, 300));
    }
    const health = await fetch(`${(running as { url: string }).url}/api/queue/health`);
    expect(health.status).toBe(503);
    const done = await queue.waitFor("send", accepted.id, { timeoutMs: 40_000 });
    expect(done.state).toBe("confirmed");
    expect(done.transactions).toHaveLength(1);
    expect(await relayerNonce(stack)).toBe(nonceBefore + 1);
    expect((await fetch(`${(running as { url: string }).url}/api/queue/health`)).status).toBe(200);
  });

  it("with the relayer drained after acceptance: nothing is sent while it cannot pay; refunded, the operation is confirmed", async () => {
    const queue = await start();
    const { config, transaction } = await provenSend(stack, pool, queue, 5);
    const balance = await rpc<string>(stack.rpcUrl, "eth_getBalance", [stack.relayer.address, "latest"]);
    const nonceBefore = await relayerNonce(stack);
    stack.faults.rpc({ kind: "timeout", methods: ["eth_getTransactionCount"] }); // held before signing...
    const accepted = await queue.submit("send", config, transaction);
    await rpc(stack.rpcUrl, "anvil_setBalance", [stack.relayer.address, "0x0"]); // ...while the relayer is drained
    stack.faults.rpc(null);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(["accepted", "processing"]).toContain((await queue.status("send", accepted.id)).state);
    expect(await relayerNonce(stack)).toBe(nonceBefore);
    expect((await fetch(`${(running as { url: string }).url}/api/queue/health`)).status).toBe(503);
    await rpc(stack.rpcUrl, "anvil_setBalance", [stack.relayer.address, balance]);
    const done = await queue.waitFor("send", accepted.id, { timeoutMs: 30_000 });
    expect(done.state).toBe("confirmed");
    expect(await relayerNonce(stack)).toBe(nonceBefore + 1);
  });
});
