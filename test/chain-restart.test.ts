import { writeFile } from "node:fs/promises";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { execa, type ResultPromise } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { anvilBinaryPath } from "../harness/chain/index.ts";
import { CHAIN_ID } from "../harness/chain/index.ts";
import type { DevStack } from "../harness/index.ts";
import { createQueueClient, QueueProblemError, reviewedFrom, type QueueClient } from "../harness/client/index.ts";
import type { Operation } from "../src/schemas/operation.ts";
import { provenSend, type poolFixture } from "./support/pool.ts";
import { gone } from "./support/processes.ts";
import { rpc } from "./support/rpc.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { pollUntil, relayerNonce, withRuntimeProcesses } from "./support/runtime-process.ts";

// The chain's process killed and started again while operations are in flight, as a node restarts:
// its blocks are durable (dumped just before the kill), its mempool is not. The operator's runtime (its
// own process) keeps answering, refuses new work while the chain is gone, and afterwards brings every
// operation to confirmed, each by one transaction.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
withQueueStack({}, (started) => ({ stack, pool } = started));
const runtimes = withRuntimeProcesses("devstack-chain-restart-");
let restarted: ResultPromise | null = null;
afterAll(async () => {
  restarted?.kill("SIGKILL");
  await restarted?.catch(() => {});
});


describe("the chain killed and restarted under the operator's runtime", () => {
  it("operations included, submitted and accepted at the kill are each confirmed by one transaction; new work is refused meanwhile, then accepted", async () => {
    const runtime = await runtimes.start(stack, ["--store", path.join(runtimes.dir, "queue.sqlite"), "--rate-limit", "off", "--confirmations", "3", "--chain-timeout-ms", "1000"], {
      rpcUrl: stack.faults.rpcUrl,
      wsRpcUrl: stack.rpcUrl.replace(/^http/, "ws"), // new heads by subscription: the socket is lost with the node
    });
    let stderr = "";
    runtime.child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const queue: QueueClient = createQueueClient({ baseUrl: runtime.url, reviewed: reviewedFrom(stack.manifest) });
    const sends = await Promise.all([2, 3, 4, 5].map((from) => provenSend(stack, pool, queue, from)));
    const [a, b, c, d] = sends as [(typeof sends)[0], (typeof sends)[0], (typeof sends)[0], (typeof sends)[0]];
    const nonceBefore = await relayerNonce(stack);

    // included: mined, one confirmation of three.
    const aId = (await queue.submit("send", a.config, a.transaction)).id;
    const included = await pollUntil(() => queue.status("send", aId), (op) => op.state === "included");
    // submitted: broadcast, in the mempool (mining held).
    await rpc(stack.rpcUrl, "evm_setAutomine", [false]);
    const bId = (await queue.submit("send", b.config, b.transaction)).id;
    const submitted = await pollUntil(() => queue.status("send", bId), (op) => op.state === "submitted");
    // accepted: its nonce read never answers.
    stack.faults.rpc({ kind: "timeout", methods: ["eth_getTransactionCount"] });
    const accepted = await queue.submit("send", c.config, c.transaction);

    // The node goes down: its blocks on disk, its mempool lost.
    const dump = await rpc<string>(stack.rpcUrl, "anvil_dumpState");
    const stateFile = path.join(runtimes.dir, "chain-state.json");
    await writeFile(stateFile, gunzipSync(Buffer.from(dump.slice(2), "hex")));
    process.kill(stack.chainPid, "SIGKILL");
    expect(await gone(stack.chainPid)).toBe(true);
    stack.faults.rpc(null);

    // While it is gone: answers stay truthful, the runtime is not ready, new work is refused (503, retry).
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await queue.status("send", included.id)).state).toBe("included");
    expect((await queue.status("send", submitted.id)).state).toBe("submitted");
    expect(["accepted", "processing"]).toContain((await queue.status("send", accepted.id)).state);
    expect((await fetch(`${runtime.url}/api/queue/health`)).status).toBe(503);
    const refused = await queue.submit("send", d.config, d.transaction).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(QueueProblemError);
    expect(refused).toMatchObject({ status: 503, code: "chain_unavailable" });

    // The node comes back on the same address, from its blocks (automine, as a fresh node would).
    const port = new URL(stack.rpcUrl).port;
    restarted = execa(anvilBinaryPath(), ["--host", "127.0.0.1", "--port", port, "--chain-id", String(CHAIN_ID), "--load-state", stateFile], { reject: false });
    for (let i = 0; (await rpc<string>(stack.rpcUrl, "eth_blockNumber").catch(() => null)) === null; i++) {
      if (i > 200) throw new Error("the restarted chain did not answer");
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await rpc<{ hash: string }>(stack.rpcUrl, "eth_getBlockByNumber", [`0x${(included.block?.number ?? 0).toString(16)}`, false])).toMatchObject({ hash: included.block?.hash });

    // The refused operation, sent again, is accepted (the runtime recovers by itself).
    let retried: Operation | null = null;
    for (let i = 0; retried === null; i++) {
      retried = await queue.submit("send", d.config, d.transaction).catch((error: unknown) => (i < 100 ? null : Promise.reject(error)));
      if (retried === null) await new Promise((r) => setTimeout(r, 100));
    }
    const ids = [included.id, submitted.id, accepted.id, retried.id];
    await Promise.all(ids.map((id) => pollUntil(() => queue.status("send", id), (op) => op.state === "included" || op.state === "confirmed")));
    await rpc(stack.rpcUrl, "anvil_mine", ["0x3"]); // the confirmations wanted, past every block so far
    const done = await Promise.all(ids.map((id) => queue.waitFor("send", id, { timeoutMs: 30_000 })));
    for (const op of done) {
      expect(op.state).toBe("confirmed");
      expect(op.transactions).toHaveLength(1);
    }
    expect(done[0]?.transactionHash).toBe(included.transactionHash); // the block it was in survived
    expect(done[1]?.transactionHash).toBe(submitted.transactions[0]?.hash); // the stored bytes, broadcast again
    expect(await relayerNonce(stack)).toBe(nonceBefore + 4);
    expect(stderr).toBe(""); // the lost socket's reconnects print nothing of their own
  });
});
