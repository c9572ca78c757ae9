import { describe, expect, it } from "vitest";
import { erc20Abi, parseAbi, type Hex } from "viem";
import { SnapshotError, type DevStack } from "../harness/index.ts";
import { snapshotHooks } from "../harness/snapshot/index.ts";
import { createAccountKeys, recipientOf, type QueueClient } from "../harness/client/index.ts";
import type { poolFixture } from "./support/pool.ts";
import { hex, rpc } from "./support/rpc.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// Snapshots of a whole stack: the chain and the queue's operation store go back together, with no
// process restarted.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let client: QueueClient;

withQueueStack({ options: { logger: { level: process.env.DEVSTACK_LOG ?? "silent" } } }, (started) => ({ stack, pool, queue: client } = started));

const head = async () => rpc<{ number: Hex; hash: Hex; timestamp: Hex }>(stack.rpcUrl, "eth_getBlockByNumber", ["latest", false]);
const nullifierSpent = (n: bigint) =>
  pool.user(0).public.readContract({ address: stack.manifest.poolAddress, abi: parseAbi(["function nullifierSpent(uint256) view returns (bool)"]), functionName: "nullifierSpent", args: [n] });

describe("stack snapshots", () => {
  it("a revert takes the relayed operation out of chain and store together, and the same send then goes through again", async () => {
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
    const relayerNonce = () => pool.user(0).public.getTransactionCount({ address: stack.relayer.address });
    const relayerFees = () => pool.user(0).public.readContract({ address: pool.asset, abi: erc20Abi, functionName: "balanceOf", args: [stack.relayer.address] });

    const before = await stack.snapshot();
    const [nonceBefore, feesBefore] = [await relayerNonce(), await relayerFees()];
    const since = new Date().toISOString();
    const first = await client.waitFor("send", (await client.submit("send", config, transaction, { idempotencyKey: "snapshot-send" })).id);
    expect(first.state).toBe("confirmed");
    // What a failing test's report would list.
    expect(stack.diagnostics(since).operations).toEqual([expect.objectContaining({ id: first.id, kind: "send", state: "confirmed", transactionHash: first.transactionHash })]);
    const nullifier = BigInt(transaction.publicInputs.inputNullifiers[0] as bigint | string);
    expect(await nullifierSpent(nullifier)).toBe(true);

    await stack.revert(before);
    expect(Number((await head()).number)).toBe(before.blockNumber);
    expect(await nullifierSpent(nullifier)).toBe(false);
    expect(await relayerNonce()).toBe(nonceBefore);
    expect(await relayerFees()).toBe(feesBefore);
    // The store followed the chain: the operation and its idempotency key are gone.
    const gone = await fetch(`${stack.queueUrl}/api/queue/send-status?id=${first.id}`);
    expect(gone.status).toBe(404);

    // The relayer's bookkeeping matches the reverted chain: the same key makes a new operation, signed
    // at the reverted nonce, and it is confirmed.
    const again = await client.waitFor("send", (await client.submit("send", config, transaction, { idempotencyKey: "snapshot-send" })).id);
    expect(again.id).not.toBe(first.id);
    expect(again.state).toBe("confirmed");
    expect(again.transactions[0]?.nonce).toBe(nonceBefore);
    expect(await nullifierSpent(nullifier)).toBe(true);
  });

  it("goes back exactly, round after round, also with blocks being mined and transactions pending", async () => {
    const snap = await stack.snapshot();
    const user = pool.user(3);
    for (let round = 0; round < 15; round++) {
      // Blocks mined and a transfer left pending in the pool (automine off) when the revert comes.
      await rpc(stack.rpcUrl, "anvil_mine", [hex(1 + (round % 3))]);
      if (round % 2) {
        await rpc(stack.rpcUrl, "evm_setAutomine", [false]);
        await user.wallet.sendTransaction({ to: stack.accounts[4]?.address, value: 1n });
      }
      await stack.revert(snap);
      const block = await head();
      expect(Number(block.number)).toBe(snap.blockNumber);
      expect(block.hash).toBe(snap.blockHash);
      expect(await rpc(stack.rpcUrl, "anvil_getAutomine")).toBe(true); // the mining mode at the snapshot
      expect((await rpc<{ pending: Record<string, unknown> }>(stack.rpcUrl, "txpool_content")).pending).toEqual({});
    }
  });

  it("a reset after a mined transaction is one round trip to anvil; after one still pending, it quiesces and reverts to the spare", async () => {
    await stack.reset();
    const start = await head();
    const user = pool.user(3);
    const trips: string[][] = [];
    snapshotHooks.roundTrip = (methods) => void trips.push(methods);
    try {
      // Mined (its receipt read): nothing is under way, so the revert needs no quiesce (issue 32, item 4).
      await user.public.waitForTransactionReceipt({ hash: await user.wallet.sendTransaction({ to: stack.accounts[4]?.address, value: 1n }) });
      await stack.reset();
      expect(trips).toEqual([["anvil_getIntervalMining", "txpool_status", "evm_revert", "evm_snapshot", "eth_getBlockByNumber", "evm_setAutomine", "evm_setTime", "anvil_removeBlockTimestampInterval", "anvil_setNextBlockBaseFeePerGas", "anvil_setCoinbase"]]);
      expect((await head()).hash).toBe(start.hash);
      // Pending (automine off): the one batch sees the pool, and the reset goes the long, safe way.
      trips.length = 0;
      await rpc(stack.rpcUrl, "evm_setAutomine", [false]);
      await user.wallet.sendTransaction({ to: stack.accounts[4]?.address, value: 1n });
      await stack.reset();
      expect(trips.length).toBeGreaterThan(1);
      expect(trips.flat()).toEqual(expect.arrayContaining(["anvil_dropAllTransactions", "evm_mine"]));
      expect((await head()).hash).toBe(start.hash);
      expect((await rpc<{ pending: Record<string, unknown> }>(stack.rpcUrl, "txpool_content")).pending).toEqual({});
      expect(await rpc(stack.rpcUrl, "anvil_getAutomine")).toBe(true);
    } finally {
      snapshotHooks.roundTrip = undefined;
    }
  });

  it("puts the mining mode back (anvil's snapshots do not hold it): automine, or interval mining", async () => {
    const automine = await stack.snapshot();
    await rpc(stack.rpcUrl, "evm_setIntervalMining", [1]);
    const interval = await stack.snapshot();
    await stack.revert(automine);
    expect(await rpc(stack.rpcUrl, "anvil_getAutomine")).toBe(true);
    expect(await rpc(stack.rpcUrl, "anvil_getIntervalMining")).toBeNull();
    await expect(stack.revert(interval)).rejects.toThrow(SnapshotError); // taken after automine's: dropped
    await rpc(stack.rpcUrl, "evm_setIntervalMining", [1]);
    const again = await stack.snapshot();
    await rpc(stack.rpcUrl, "evm_setAutomine", [true]);
    await stack.revert(again);
    expect(await rpc(stack.rpcUrl, "anvil_getIntervalMining")).toBe(1);
    expect(await rpc(stack.rpcUrl, "anvil_getAutomine")).toBe(false);
    await stack.revert(automine);
    expect(await rpc(stack.rpcUrl, "anvil_getAutomine")).toBe(true);
  });

  it("reset() goes back to the stack as it started; a revert drops the snapshots taken after its own", async () => {
    const start = await stack.snapshot();
    await rpc(stack.rpcUrl, "anvil_mine", [hex(2)]);
    const later = await stack.snapshot();
    await stack.revert(start);
    await expect(stack.revert(later)).rejects.toThrow(SnapshotError);
    await stack.revert(start); // still usable after a revert

    await stack.reset();
    // No operation survives a reset, and the chain is at its start block (the genesis deployment).
    expect(Number((await head()).number)).toBe(stack.manifest.deploymentBlock);
    await expect(stack.revert(start)).rejects.toThrow(SnapshotError);
  });

  it("loadFixture runs the setup once and then restores its result, until a reset drops it", async () => {
    let runs = 0;
    const target = stack.accounts[5]?.address as Hex;
    const funded = async (s: DevStack) => {
      runs++;
      await rpc(s.rpcUrl, "anvil_setBalance", [target, hex(12345n)]);
      await rpc(s.rpcUrl, "anvil_mine", [hex(1)]);
      return { target };
    };
    const balance = () => rpc<Hex>(stack.rpcUrl, "eth_getBalance", [target, "latest"]);
    expect(await stack.loadFixture(funded)).toEqual({ target });
    await rpc(stack.rpcUrl, "anvil_setBalance", [target, hex(1n)]);
    expect(await stack.loadFixture(funded)).toEqual({ target });
    expect(BigInt(await balance())).toBe(12345n);
    expect(runs).toBe(1);
    await stack.reset();
    expect(BigInt(await balance())).not.toBe(12345n);
    await stack.loadFixture(funded);
    expect(runs).toBe(2);
    expect(BigInt(await balance())).toBe(12345n);
  });

  it("a revert that does not take (a block lands on the reverted state, as in anvil 1.7.1's race) falls back to the spare: the stack keeps its reset", async () => {
    await stack.reset();
    const start = await head();
    let late = 1;
    // Right after the revert, once: a block mined on top, where the revert's check sees it.
    snapshotHooks.afterRevert = async () => {
      if (late-- > 0) await rpc(stack.rpcUrl, "evm_mine");
    };
    try {
      await rpc(stack.rpcUrl, "anvil_mine", [hex(2)]);
      await stack.reset();
      expect(late).toBe(-1); // the fallback's revert ran the hook too
      const back = await head();
      expect(back.hash).toBe(start.hash);
      // Twice not taking loses the snapshot, and says so; the clean one is another, and still resets.
      const doomed = await stack.snapshot();
      late = 2;
      await expect(stack.revert(doomed)).rejects.toThrow(/^this snapshot is lost: the chain did not go back .*twice/);
      await expect(stack.revert(doomed)).rejects.toThrow(/this snapshot is lost/);
      // The clean one cannot be lost: twice not taking, the reset reloads the chain it kept.
      late = 2;
      await stack.reset();
      expect(late).toBe(0);
      expect(await head()).toMatchObject({ number: start.number, hash: start.hash });
    } finally {
      snapshotHooks.afterRevert = undefined;
    }
    for (let i = 0; i < 3; i++) {
      await rpc(stack.rpcUrl, "anvil_mine", [hex(1)]);
      await stack.reset();
      expect((await head()).hash).toBe(start.hash);
    }
  });
});
