import { erc20Abi, type Address } from "viem";
import { closeProvers, createAccountKeys, recipientOf } from "../harness/client/index.ts";
import { afterAll, describe, expect, test as stackTest } from "../harness/vitest/index.ts";
import { poolFixture } from "./support/pool.ts";

// On queue-devstack's vitest integration: the worker's stack, reset before each test, and the pool
// helpers (proof files, prover) made once per worker.
const it = stackTest.extend<{ pool: Awaited<ReturnType<typeof poolFixture>> }>({
  pool: [async ({ workerStack }, use) => use(await poolFixture(workerStack)), { scope: "worker" }],
});
afterAll(async () => {
  await closeProvers();
});

describe("relaying", () => {
  it("a private send goes from accepted to confirmed, paying the relayer its fee", async ({ stack, pool, queue: client }) => {
    const alice = createAccountKeys();
    const bob = createAccountKeys();
    const config = await client.beforePrepare();
    const { state, input } = await pool.fundedNote(2, alice, pool.usdc("10"));
    const fee = BigInt(config.relayFees.fees[0]?.send ?? "0");
    const { transaction } = await pool.prove({
      tree: state.tree, keys: alice, inputs: [input],
      outputs: [{ amount: pool.usdc("4"), to: recipientOf(bob) }, { amount: pool.usdc("6") - fee, to: recipientOf(alice) }],
      fee, relayer: stack.relayer.address,
    });
    const before = await pool.user(0).public.readContract({ address: pool.asset, abi: erc20Abi, functionName: "balanceOf", args: [stack.relayer.address] });
    const accepted = await client.submit("send", config, transaction);
    expect(accepted.state).toBe("accepted");
    const done = await client.waitFor("send", accepted.id);
    expect(done.state).toBe("confirmed");
    expect(done.transactionHash).toBe(done.transactions.at(-1)?.hash);
    expect(done.history.map((h) => h.state)).toEqual(["accepted", "processing", "submitted", "included", "confirmed"]);
    const after = await pool.user(0).public.readContract({ address: pool.asset, abi: erc20Abi, functionName: "balanceOf", args: [stack.relayer.address] });
    expect(after - before).toBe(fee);
  });

  it("a withdrawal pays the recipient", async ({ stack, pool, queue: client }) => {
    const carol = createAccountKeys();
    const config = await client.beforePrepare();
    const { state, input } = await pool.fundedNote(3, carol, pool.usdc("10"));
    const fee = BigInt(config.relayFees.fees[0]?.withdraw ?? "0");
    const payee = "0x000000000000000000000000000000000000c0de" as Address;
    const { transaction } = await pool.prove({
      tree: state.tree, keys: carol, inputs: [input],
      outputs: [{ amount: pool.usdc("3"), to: recipientOf(carol) }],
      extAmount: -(pool.usdc("7") - fee), fee, recipient: payee, relayer: stack.relayer.address,
    });
    const op = await client.waitFor("withdraw", (await client.submit("withdraw", config, transaction)).id);
    expect(op.state).toBe("confirmed");
    expect(await pool.user(0).public.readContract({ address: pool.asset, abi: erc20Abi, functionName: "balanceOf", args: [payee] })).toBe(pool.usdc("7") - fee);
  });
});
