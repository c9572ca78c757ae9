import { afterAll, describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { createAccountKeys, recipientOf, toRelayRequest, type AccountKeys } from "../harness/client/index.ts";
import type { Operation } from "../src/schemas/operation.ts";
import type { RelayRequest } from "../src/schemas/request.ts";
import { clients, RELAYER_KEY } from "./support/chain.ts";
import type { poolFixture } from "./support/pool.ts";
import { rpc } from "./support/rpc.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// A client that retries with an Idempotency-Key always learns the id of what it submitted, even when
// an unkeyed copy of the same request was stored first; a nullifier spent by one of our operations is
// answered with that operation's id. Real stack, real proofs.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
withQueueStack({ options: { relay: { stuckAfterMs: 60_000 } } }, (started) => ({ stack, pool } = started));
afterAll(async () => {
  await rpc(stack?.rpcUrl, "evm_setAutomine", [true]).catch(() => {});
});

type Answer = { status: number; body: Operation & { code?: string; operationId?: string; nullifier?: string } };

async function send(body: RelayRequest, key?: string): Promise<Answer> {
  const response = await fetch(`${stack.queueUrl}/api/queue/send-relay`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key === undefined ? {} : { "idempotency-key": key }) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Answer["body"] };
}

async function until(id: string, done: (op: Operation) => boolean): Promise<Operation> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const op = (await (await fetch(`${stack.queueUrl}/api/queue/send-status?id=${id}`)).json()) as Operation;
    if (done(op)) return op;
    if (Date.now() > deadline) throw new Error(`operation ${id} stuck in ${op.state}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A deposited note of fresh keys, and a proved send of it (call `prove` again for another body spending the same note). */
async function spendable() {
  const keys: AccountKeys = createAccountKeys();
  const { state, input } = await pool.fundedNote(2, keys, pool.usdc("3"));
  const fee = BigInt(stack.manifest.relayFees.fees[0]?.send ?? "0");
  const prove = async () =>
    toRelayRequest(
      stack.manifest,
      (await pool.prove({ tree: state.tree, keys, inputs: [input], outputs: [{ amount: pool.usdc("3") - fee, to: recipientOf(createAccountKeys()) }], fee, relayer: stack.relayer.address }))
        .transaction,
    );
  return { body: await prove(), prove };
}

const key = (name: string) => `${name}-${Math.random().toString(36).slice(2)}`;

describe("a keyed request identical to a stored unkeyed one", () => {
  let body: RelayRequest;
  let prove: () => Promise<RelayRequest>;
  let id = "";

  it("answers the stored operation while it is live, and binds the key to it (several keys may name it)", async () => {
    ({ body, prove } = await spendable());
    await rpc(stack.rpcUrl, "evm_setAutomine", [false]); // it stays live until a block is mined
    try {
      const first = await send(body);
      expect(first.status).toBe(202);
      id = first.body.id;
      await until(id, (o) => o.state === "submitted");

      const [k1, k2] = [key("one"), key("two")];
      expect(await send(body, k1)).toMatchObject({ status: 202, body: { id } });
      expect(await send(body, k2)).toMatchObject({ status: 202, body: { id } });
      // The keys are bound: a replay answers the operation; another body under the key is refused, naming it.
      expect(await send(body, k1)).toMatchObject({ status: 202, body: { id } });
      const other = await prove();
      expect(await send(other, k2)).toMatchObject({ status: 422, body: { code: "idempotency_key_reused", operationId: id } });
      // Unkeyed copies are not idempotent: they are told which operation holds the nullifier.
      expect(await send(body)).toMatchObject({ status: 409, body: { code: "nullifier_in_flight", operationId: id } });
    } finally {
      await rpc(stack.rpcUrl, "evm_setAutomine", [true]);
    }
    await rpc(stack.rpcUrl, "evm_mine");
    expect((await until(id, (o) => o.terminal)).state).toBe("confirmed");
  });

  it("answers the confirmed operation; a nullifier it spent is answered with its id", async () => {
    const k3 = key("three");
    expect(await send(body, k3)).toMatchObject({ status: 202, body: { id, state: "confirmed" } });
    expect(await send(body, k3)).toMatchObject({ status: 202, body: { id } });
    const unkeyed = await send(body);
    expect(unkeyed).toMatchObject({ status: 409, body: { code: "nullifier_spent", operationId: id } });
    expect(body.publicInputs.inputNullifiers).toContain(unkeyed.body.nullifier);
    // Another body spending the same note: not the same request, so not bound, but the spender is named.
    const other = await prove();
    expect(await send(other, key("four"))).toMatchObject({ status: 409, body: { code: "nullifier_spent", operationId: id } });
    expect(await send(other)).toMatchObject({ status: 409, body: { code: "nullifier_spent", operationId: id } });
  });
});

describe("the race: keyed copies losing the insert to an unkeyed twin", () => {
  it("every keyed copy answers the one operation; nothing is sent twice", async () => {
    const { body } = await spendable();
    const nonce = async () => Number(await rpc<string>(stack.rpcUrl, "eth_getTransactionCount", [stack.relayer.address, "latest"]));
    const before = await nonce();
    // Unkeyed and keyed copies interleaved, all at once: whichever is stored first, the keyed ones learn its id.
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? send(body) : send(body, key(`race${i}`)))));
    const keyed = answers.filter((_, i) => i % 2 === 1);
    const ids = new Set(answers.filter((a) => a.status === 202).map((a) => a.body.id));
    expect(ids.size).toBe(1);
    const [id] = [...ids] as [string];
    for (const answer of keyed) expect(answer, JSON.stringify(answer.body)).toMatchObject({ status: 202, body: { id } });
    for (const answer of answers.filter((_, i) => i % 2 === 0)) {
      if (answer.status === 202) continue;
      expect(answer.status).toBe(409);
      expect(answer.body.operationId).toBe(id);
    }
    expect((await until(id, (o) => o.terminal)).state).toBe("confirmed");
    expect(await nonce()).toBe(before + 1);
  });
});

describe("a keyed request identical to an operation that failed", () => {
  it("is a new operation, not the failed one: a failed operation may be retried", async () => {
    const { body } = await spendable();
    await rpc(stack.rpcUrl, "evm_setAutomine", [false]);
    let failed: Operation;
    try {
      const first = await send(body);
      expect(first.status).toBe(202);
      const submitted = await until(first.body.id, (o) => o.state === "submitted");
      // Someone else uses the relayer key: the same nonce, outbidding it. Nothing of the operation can be mined.
      const attempt = submitted.transactions[0] as Operation["transactions"][0];
      const { wallet } = clients(stack.rpcUrl, RELAYER_KEY);
      await wallet.sendTransaction({
        to: stack.relayer.address, value: 0n, gas: 21_000n, nonce: attempt.nonce,
        maxFeePerGas: BigInt(attempt.maxFeePerGas) * 3n, maxPriorityFeePerGas: BigInt(attempt.maxPriorityFeePerGas) * 3n,
      });
      await rpc(stack.rpcUrl, "evm_mine");
      failed = await until(first.body.id, (o) => o.terminal);
      expect(failed).toMatchObject({ state: "expired", reason: { code: "nonce_consumed" } });
    } finally {
      await rpc(stack.rpcUrl, "evm_setAutomine", [true]);
    }
    const k = key("after-failure");
    const retry = await send(body, k);
    expect(retry.status).toBe(202);
    expect(retry.body.id).not.toBe(failed.id);
    // The key names the new operation from now on, whatever becomes of it.
    expect((await send(body, k)).body.id).toBe(retry.body.id);
    expect((await until(retry.body.id, (o) => o.terminal)).state).toBe("confirmed");
    expect(await send(body, k)).toMatchObject({ status: 202, body: { id: retry.body.id, state: "confirmed" } });
  });
});
