import { request as httpRequest } from "node:http";
import { afterAll, describe, expect, it } from "vitest";
import type { Hex } from "viem";
import type { DevStack } from "../harness/index.ts";
import { createAccountKeys, poolAbi, recipientOf, toRelayRequest } from "../harness/client/index.ts";
import type { Operation } from "../src/schemas/operation.ts";
import type { RelayRequest } from "../src/schemas/request.ts";
import { provenRequest } from "./support/pool.ts";
import { withQueueStack, type QueueStack } from "./support/queue-stack.ts";
import { hex, nodeHolds, rpc } from "./support/rpc.ts";

// The engine under pressure, on real stacks: concurrency, stuck transactions, a full queue, reorgs.
function fixture({ stack, pool }: QueueStack) {
  /** A valid send, proved, of a freshly deposited note (each call spends a different note). */
  const request = (from = 2) => provenRequest(stack, pool, { from });
  async function send(body: RelayRequest, headers: Record<string, string> = {}) {
    const response = await fetch(`${stack.queueUrl}/api/queue/send-relay`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Operation & { code?: string; operationId?: string } };
  }
  async function status(id: string): Promise<Operation> {
    return (await (await fetch(`${stack.queueUrl}/api/queue/send-status?id=${id}`)).json()) as Operation;
  }
  async function until(id: string, done: (op: Operation) => boolean, timeoutMs = 30_000): Promise<Operation> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const op = await status(id);
      if (done(op)) return op;
      if (Date.now() > deadline) throw new Error(`operation ${id} stuck in ${op.state}: ${JSON.stringify(op.history)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const nonce = async () => Number(await rpc<string>(stack.rpcUrl, "eth_getTransactionCount", [stack.relayer.address, "latest"]));
  return { pool, request, send, status, until, nonce };
}

describe("50 concurrent identical submissions", () => {
  let f: ReturnType<typeof fixture>;
  // No fee bump: one attempt exactly.
  withQueueStack({ options: { relay: { stuckAfterMs: 60_000 } } }, (started) => (f = fixture(started)));

  it("make exactly one operation and one transaction; the others are told which operation holds the nullifier", async () => {
    const body = await f.request();
    const nonceBefore = await f.nonce();
    const answers = await Promise.all(Array.from({ length: 50 }, () => f.send(body)));
    const accepted = answers.filter((a) => a.status === 202);
    expect(accepted).toHaveLength(1);
    const id = accepted[0]?.body.id as string;
    for (const refused of answers.filter((a) => a.status !== 202)) {
      expect(refused.status).toBe(409);
      // nullifier_spent if it was confirmed before this one was checked: by that same operation.
      expect(["nullifier_in_flight", "nullifier_spent"]).toContain(refused.body.code);
      expect(refused.body.operationId).toBe(id);
    }
    const op = await f.until(id, (o) => o.terminal);
    expect(op.state).toBe("confirmed");
    expect(op.transactions).toHaveLength(1);
    expect(await f.nonce()).toBe(nonceBefore + 1);
  });

  it("with one Idempotency-Key, all 50 get the same operation", async () => {
    const body = await f.request();
    const nonceBefore = await f.nonce();
    const answers = await Promise.all(Array.from({ length: 50 }, () => f.send(body, { "idempotency-key": "fifty" })));
    expect(answers.every((a) => a.status === 202)).toBe(true);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    await f.until(answers[0]?.body.id as string, (o) => o.state === "confirmed");
    expect(await f.nonce()).toBe(nonceBefore + 1);
  });
});

describe("automine off", () => {
  let stack: DevStack;
  let f: ReturnType<typeof fixture>;
  withQueueStack({ options: { relay: { stuckAfterMs: 1_000, maxLiveOperations: 2 } } }, (started) => {
    ({ stack } = started);
    f = fixture(started);
  });
  afterAll(async () => {
    await rpc(stack.rpcUrl, "evm_setAutomine", [true]).catch(() => {});
  });

  it("a stuck transaction is replaced with a fee bump; the replacement is tracked to confirmed; the queue fills up", async () => {
    const [a, b, c] = [await f.request(2), await f.request(3), await f.request(4)];
    await rpc(stack.rpcUrl, "evm_setAutomine", [false]);
    const first = await f.send(a);
    expect(first.status).toBe(202);
    const id = first.body.id;
    const submitted = await f.until(id, (o) => o.state === "submitted");
    // The same nullifiers again, while the first is live: 409 naming it.
    expect(await f.send(a)).toMatchObject({ status: 409, body: { code: "nullifier_in_flight", operationId: id } });
    // Time passes without a block: the engine re-signs the same nonce with higher fees.
    const bumped = await f.until(id, (o) => o.transactions.length >= 2);
    const [original, replacement] = bumped.transactions as [Operation["transactions"][0], Operation["transactions"][0]];
    expect(replacement.nonce).toBe(original.nonce);
    expect(BigInt(replacement.maxFeePerGas)).toBeGreaterThanOrEqual((BigInt(original.maxFeePerGas) * 125n) / 100n);
    expect(BigInt(replacement.maxPriorityFeePerGas)).toBeGreaterThan(BigInt(original.maxPriorityFeePerGas));
    expect(submitted.transactions[0]?.hash).toBe(original.hash);
    expect(bumped.history.some((h) => h.detail?.startsWith("fee bump"))).toBe(true);

    // Capacity: a second operation fits (limit 2), a third gets 503 queue_full with Retry-After.
    expect((await f.send(b)).status).toBe(202);
    const full = await fetch(`${stack.queueUrl}/api/queue/send-relay`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(c) });
    expect(full.status).toBe(503);
    expect(((await full.json()) as { code: string }).code).toBe("queue_full");
    expect(Number(full.headers.get("retry-after"))).toBeGreaterThan(0);

    // A block at last: whichever attempt is mined is the real one (the replacement).
    await rpc(stack.rpcUrl, "evm_mine");
    const done = await f.until(id, (o) => o.terminal);
    expect(done.state).toBe("confirmed");
    const minedHash = done.transactionHash as Hex;
    expect(done.transactions.map((t) => t.hash)).toContain(minedHash);
    expect(minedHash).not.toBe(original.hash);
    expect(await rpc(stack.rpcUrl, "eth_getTransactionReceipt", [original.hash])).toBeNull();
    await rpc(stack.rpcUrl, "evm_setAutomine", [true]);
  });
});

describe("a reorg", () => {
  let stack: DevStack;
  let f: ReturnType<typeof fixture>;
  withQueueStack({ options: { relay: { requiredConfirmations: 3, stuckAfterMs: 60_000 } } }, (started) => {
    ({ stack } = started);
    f = fixture(started);
  });

  it("moves an included operation back to submitted, and forward again to confirmed", async () => {
    const body = await f.request();
    const snapshot = await rpc<string>(stack.rpcUrl, "evm_snapshot");
    const { body: accepted } = await f.send(body);
    const included = await f.until(accepted.id, (o) => o.state === "included");
    expect(included.confirmations).toBeLessThan(3);
    // The block that held it leaves the chain.
    await rpc(stack.rpcUrl, "evm_revert", [snapshot]);
    const back = await f.until(accepted.id, (o) => o.history.some((h) => h.state === "submitted" && h.detail?.startsWith("reorg")));
    expect(back.history.find((h) => h.detail?.startsWith("reorg"))?.detail).toContain(included.block?.hash as string);
    // The engine re-broadcasts the same signed bytes; automine includes them again; two more blocks confirm.
    const again = await f.until(accepted.id, (o) => o.state === "included");
    await rpc(stack.rpcUrl, "anvil_mine", [hex(2)]);
    const done = await f.until(accepted.id, (o) => o.terminal);
    expect(done.state).toBe("confirmed");
    expect(done.confirmations).toBeGreaterThanOrEqual(3);
    expect(done.transactions).toHaveLength(1);
    expect(done.transactionHash).toBe(included.transactionHash);
    expect(again.block?.hash).not.toBe(included.block?.hash);
    const states = done.history.map((h) => h.state);
    expect(states.slice(0, 3)).toEqual(["accepted", "processing", "submitted"]);
    expect(states.indexOf("included")).toBeLessThan(states.lastIndexOf("submitted"));
    expect(states.at(-1)).toBe("confirmed");
  });
});

describe("terminal failures", () => {
  let stack: DevStack;
  let f: ReturnType<typeof fixture>;
  withQueueStack({ options: { relay: { stuckAfterMs: 60_000 } } }, (started) => {
    ({ stack } = started);
    f = fixture(started);
  });
  afterAll(async () => {
    await rpc(stack.rpcUrl, "evm_setAutomine", [true]).catch(() => {});
  });

  it("reverted: mined with status 0 (the note was spent first by another transaction), with the Pool's decoded error", async () => {
    const keys = createAccountKeys();
    const { state, input } = await f.pool.fundedNote(2, keys, f.pool.usdc("3"));
    const fee = BigInt(stack.manifest.relayFees.fees[0]?.send ?? "0");
    const viaQueue = await f.pool.prove({ tree: state.tree, keys, inputs: [input], outputs: [{ amount: f.pool.usdc("3") - fee, to: recipientOf(keys) }], fee, relayer: stack.relayer.address });
    const direct = await f.pool.prove({ tree: state.tree, keys, inputs: [input], outputs: [{ amount: f.pool.usdc("3"), to: recipientOf(keys) }] });
    await rpc(stack.rpcUrl, "evm_setAutomine", [false]);
    const { body: accepted } = await f.send(toRelayRequest(stack.manifest, viaQueue.transaction));
    const submitted = await f.until(accepted.id, (o) => o.state === "submitted");
    // Broadcast after it was stored as submitted: the block below must include it (once, on a loaded
    // machine, it was mined without it, and the operation stayed submitted).
    await nodeHolds(stack.rpcUrl, submitted.transactions[0]?.hash as string);
    // Someone spends the same note directly, with a higher tip: mined first in the same block.
    const { wallet } = f.pool.user(5);
    const tip = BigInt(submitted.transactions[0]?.maxPriorityFeePerGas as string) * 10n;
    await wallet.writeContract({
      address: stack.manifest.poolAddress, abi: poolAbi, functionName: "transact", args: [direct.transaction.proof, direct.transaction.publicInputs, direct.transaction.extData],
      gas: 3_000_000n, maxPriorityFeePerGas: tip, maxFeePerGas: tip * 4n + BigInt(submitted.transactions[0]?.maxFeePerGas as string),
    });
    await rpc(stack.rpcUrl, "evm_mine");
    const done = await f.until(accepted.id, (o) => o.terminal);
    expect(done.state).toBe("reverted");
    expect(done.reason).toMatchObject({ code: "reverted", revert: { name: "NullifierSpent" } });
    expect(done.transactionHash).toBe(submitted.transactions[0]?.hash);
    expect(done.history.map((h) => h.state)).toEqual(["accepted", "processing", "submitted", "included", "reverted"]);
    await rpc(stack.rpcUrl, "evm_setAutomine", [true]);
  });
});

describe("an operation that cannot be broadcast in time", () => {
  let f: ReturnType<typeof fixture>;
  // Every operation is already late.
  withQueueStack({ options: { relay: { maxWaitMs: 0 } } }, (started) => (f = fixture(started)));

  it("expires with nothing sent, and frees its nullifiers", async () => {
    const body = await f.request();
    const nonceBefore = await f.nonce();
    const { status, body: accepted } = await f.send(body);
    expect(status).toBe(202);
    const done = await f.until(accepted.id, (o) => o.terminal);
    expect(done).toMatchObject({ state: "expired", reason: { code: "expired" }, transactions: [], transactionHash: null });
    expect(await f.nonce()).toBe(nonceBefore);
    // The nullifiers are free again: a retry is not refused as in flight (it is accepted, and expires too).
    expect((await f.send(body)).status).toBe(202);
  });
});

describe("each client's share of the in-flight limit", () => {
  let stack: DevStack;
  let f: ReturnType<typeof fixture>;
  withQueueStack({ options: { relay: { maxLiveOperations: 4, maxLivePerClient: 2 } } }, (started) => {
    ({ stack } = started);
    f = fixture(started);
  });

  /** POST send-relay from a loopback address of its own: a client of its own, to the runtime. */
  const sendFrom = (localAddress: string, body: unknown, path = "/api/queue/send-relay") =>
    new Promise<{ status: number; retryAfter: string | undefined; body: { id?: string; code?: string; limit?: number } }>((resolve, reject) => {
      const { hostname, port } = new URL(stack.queueUrl);
      const req = httpRequest({ host: hostname, port, path, method: "POST", localAddress, headers: { "content-type": "application/json" } }, (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString())).on("end", () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers["retry-after"], body: JSON.parse(text) }));
      });
      req.on("error", reject).end(JSON.stringify(body));
    });
  const dev = (body: unknown) => fetch(`${stack.queueUrl}/api/dev/relayer`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  it("one client filling its share is 429 too_many_in_flight, while another client's operations still go in", async () => {
    const [a, b, c, d] = [await f.request(2), await f.request(3), await f.request(4), await f.request(5)];
    expect((await dev({ engine: "paused" })).status).toBe(200); // accepted operations stay live
    const ids: string[] = [];
    try {
      for (const body of [a, b]) {
        const accepted = await sendFrom("127.0.0.2", body);
        expect(accepted.status).toBe(202);
        ids.push(accepted.body.id as string);
      }
      const over = await sendFrom("127.0.0.2", c);
      expect(over).toMatchObject({ status: 429, body: { code: "too_many_in_flight", limit: 2 } });
      expect(Number(over.retryAfter)).toBeGreaterThan(0);
      // A finalize counts toward its client's share too: refused before its reservation is even looked up.
      const finalize = { deployment: a.deployment, reservationId: `0x${"ab".repeat(32)}` };
      expect(await sendFrom("127.0.0.2", finalize, "/api/queue/finalize")).toMatchObject({ status: 429, body: { code: "too_many_in_flight" } });
      const other = await sendFrom("127.0.0.3", d);
      expect(other.status).toBe(202);
    } finally {
      await dev({ engine: "running" });
    }
    // Once its operations have ended, the client has room again.
    for (const id of ids) expect((await f.until(id, (o) => o.terminal)).state).toBe("confirmed");
    expect((await sendFrom("127.0.0.2", c)).status).toBe(202);
  });
});
