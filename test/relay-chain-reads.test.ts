import { describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { createAccountKeys, createQueueClient, recipientOf, reviewedFrom, type PreparedTransaction } from "../harness/client/index.ts";
import type { poolFixture } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { nodeFetchHooks } from "../src/chain/node-fetch.ts";

// What a relay asks the chain, counted on the runtime's own RPC (the stack's runtime runs in this
// process, its chain clients on nodeFetch): the work the engine must not do twice.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
// Re-checks before signing only when the admission's are older than a minute: none in this test.
withQueueStack({ options: { relay: { resimulateAfterMs: 60_000, stuckAfterMs: 60_000 } } }, (started) => ({ stack, pool } = started));

/** The runtime's JSON-RPC calls by method while `work` runs. */
async function callsDuring(work: () => Promise<void>): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  nodeFetchHooks.onRequest = (url, body) => {
    if (!url.startsWith(stack.faults.rpcUrl) || body === "") return;
    const parsed = JSON.parse(body) as { method: string } | Array<{ method: string }>;
    for (const call of Array.isArray(parsed) ? parsed : [parsed]) calls.set(call.method, (calls.get(call.method) ?? 0) + 1);
  };
  try {
    await work();
  } finally {
    delete nodeFetchHooks.onRequest;
  }
  return calls;
}

describe("a burst of relays", () => {
  it("simulates each once (the simulation decides root and nullifiers; the engine does not check again what the admission just did)", async () => {
    const queue = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
    const config = await queue.beforePrepare();
    const fee = BigInt(config.relayFees.fees[0]?.send ?? "0");
    const sends: PreparedTransaction[] = [];
    for (let i = 0; i < 4; i++) {
      const keys = createAccountKeys();
      const { state, input } = await pool.fundedNote(2 + i, keys, pool.usdc("3"));
      const { transaction } = await pool.prove({ tree: state.tree, keys, inputs: [input], outputs: [{ amount: pool.usdc("3") - fee, to: recipientOf(createAccountKeys()) }], fee, relayer: stack.relayer.address });
      sends.push(transaction);
    }
    const calls = await callsDuring(async () => {
      const ops = await Promise.all(sends.map((tx) => queue.submit("send", config, tx)));
      const done = await Promise.all(ops.map((op) => queue.waitFor("send", op.id, { intervalMs: 25, timeoutMs: 30_000 })));
      expect(done.map((op) => op.state)).toEqual(["confirmed", "confirmed", "confirmed", "confirmed"]);
    });
    // Before: isKnownRoot and both nullifiers read beside each simulation (4 eth_calls a relay), and a
    // watcher tick during an admission's sync checked it all again.
    expect(calls.get("eth_call"), JSON.stringify([...calls])).toBe(4);
    expect(calls.get("eth_sendRawTransaction")).toBe(4);
  });
});

describe("a node without eth_getBlockReceipts", () => {
  // Last in this file: the engine remembers a node's refusal for its lifetime.
  it("the relayer finds its receipts by hash instead, and asks for the method in one request at most", async () => {
    const queue = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
    const config = await queue.beforePrepare();
    const fee = BigInt(config.relayFees.fees[0]?.send ?? "0");
    const send = async (from: number) => {
      const keys = createAccountKeys();
      const { state, input } = await pool.fundedNote(from, keys, pool.usdc("3"));
      const { transaction } = await pool.prove({ tree: state.tree, keys, inputs: [input], outputs: [{ amount: pool.usdc("3") - fee, to: recipientOf(createAccountKeys()) }], fee, relayer: stack.relayer.address });
      return queue.waitFor("send", (await queue.submit("send", config, transaction)).id, { intervalMs: 25, timeoutMs: 30_000 });
    };
    // Whether a tick asks before the receipts are found by nonce is a race; once refused, never again.
    const requests = { blockReceipts: 0, receiptByHash: 0 };
    nodeFetchHooks.onRequest = (url, body) => {
      if (!url.startsWith(stack.faults.rpcUrl)) return;
      if (body.includes('"eth_getBlockReceipts"')) requests.blockReceipts++;
      if (body.includes('"eth_getTransactionReceipt"')) requests.receiptByHash++;
    };
    stack.faults.rpc({ kind: "unsupported", methods: ["eth_getBlockReceipts"] });
    try {
      for (const from of [6, 7, 8]) expect((await send(from)).state).toBe("confirmed");
      expect(requests.receiptByHash).toBeGreaterThan(0);
      expect(requests.blockReceipts).toBeLessThanOrEqual(1);
    } finally {
      delete nodeFetchHooks.onRequest;
      stack.faults.clear();
    }
  });
});
