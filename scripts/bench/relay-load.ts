import { erc20Abi, maxUint256, type Address, type Hex } from "viem";
import {
  createAccountKeys,
  encryptNote,
  findNotes,
  poolAbi,
  precommitmentOf,
  prepareTransaction,
  randomFieldElement,
  recipientOf,
  type Note,
  type PreparedTransaction,
  type QueueClient,
} from "../../harness/client/index.ts";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import type { Operation } from "../../src/schemas/operation.ts";
import type { poolFixture } from "../../test/support/pool.ts";

// The relay load the benchmarks share (bench:relay, bench:dashboard): private sends, each spending its
// own deposited note, proved before anything is timed, then submitted through the queue in bursts.

export const GAS = 3_000_000n; // explicit: eth_estimateGas is wrong for snarkjs verifiers

/** CPU time (ms) this process has used so far. */
export const nodeCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

type PoolFixture = Awaited<ReturnType<typeof poolFixture>>;

/**
 * `count` deposited notes of one set of keys, ready to be spent by `prove` (one approval, the deposits
 * sent back to back with explicit nonces, one sync). Every proof is made against the tree right after
 * the deposits; the Pool accepts any root it ever had, so the transactions that follow don't invalidate it.
 */
export async function depositedNotes(pool: PoolFixture, count: number, fee: bigint) {
  const { config, prover, deployment, asset, usdc } = pool;
  const depositor = pool.user(2);
  const chain = depositor.public;
  const alice = createAccountKeys();
  const amount = usdc("10");
  const approve = await depositor.wallet.writeContract({ address: asset, abi: erc20Abi, functionName: "approve", args: [config.poolAddress, maxUint256] });
  await chain.waitForTransactionReceipt({ hash: approve });
  let nonce = await chain.getTransactionCount({ address: depositor.account.address, blockTag: "pending" });
  const depositHashes: Hex[] = [];
  for (let i = 0; i < count; i++) {
    const note: Note = { amount, asset, ownerPublicKey: alice.notePublicKey, blinding: randomFieldElement() };
    depositHashes.push(
      await depositor.wallet.writeContract({
        address: config.poolAddress, abi: poolAbi, functionName: "deposit",
        args: [asset, amount, precommitmentOf(note), encryptNote(note, alice.encryption.publicKey)], gas: GAS, nonce: nonce++,
      }),
    );
  }
  for (const hash of depositHashes) {
    if ((await chain.waitForTransactionReceipt({ hash })).status !== "success") throw new Error(`deposit ${hash} reverted`);
  }
  const state = await pool.sync();
  const notes = findNotes(alice, state, deployment.domain).filter((n) => !n.spent);
  if (notes.length !== count) throw new Error(`expected ${count} deposited notes, found ${notes.length}`);
  // 4 to a fresh recipient, the rest minus the fee back to alice, the fee paid to msg.sender (Pool:
  // RelayerMismatch otherwise): the stack's relayer through the queue, an account itself when direct.
  const prove = async (input: (typeof notes)[number], relayer: Address): Promise<PreparedTransaction> =>
    (
      await prepareTransaction({
        deployment, prover, tree: state.tree, keys: alice, asset,
        inputs: [{ note: input.note, leafIndex: input.leafIndex }],
        outputs: [{ amount: usdc("4"), to: recipientOf(createAccountKeys()) }, { amount: amount - usdc("4") - fee, to: recipientOf(alice) }],
        fee, relayer,
      })
    ).transaction;
  return { notes, prove };
}

/** The queue's send fee for the fixture's asset. */
export const sendFee = (queueConfig: DeploymentConfig, asset: Address) =>
  BigInt(queueConfig.relayFees.fees.find((f) => f.asset.toLowerCase() === asset.toLowerCase())?.send ?? "0");

export class QueuePathError extends Error {
  override name = "QueuePathError";
}

/**
 * A burst through the queue: all of `txs` submitted at once, each polled until terminal. Throws a
 * QueuePathError (each failure printed first) unless every one confirmed.
 */
export async function queueBurst(queue: QueueClient, queueConfig: DeploymentConfig, txs: PreparedTransaction[], poll: { intervalMs: number; timeoutMs: number }) {
  const started = performance.now();
  const settled = await Promise.allSettled(
    txs.map(async (tx) => {
      const t0 = performance.now();
      const sentAt = Date.now();
      const accepted = await queue.submit("send", queueConfig, tx);
      const accept = performance.now();
      const op: Operation = await queue.waitFor("send", accepted.id, poll);
      return { op, sentAt, seenAt: Date.now(), acceptMs: accept - t0, latencyMs: performance.now() - t0, doneAt: performance.now() };
    }),
  );
  let failures = 0;
  for (const r of settled) {
    if (r.status === "rejected") {
      failures++;
      console.error(`submission failed: ${(r.reason as Error).message}`); // a QueueProblemError names the problem code
    } else if (r.value.op.state !== "confirmed") {
      const op = r.value.op;
      failures++;
      console.error(`operation ${op.id} ended ${op.state}${op.terminal ? "" : ` (not terminal after ${poll.timeoutMs} ms)`}: ${op.reason ? `${op.reason.code}: ${op.reason.detail}` : "no reason given"}`);
      console.error(`  history: ${op.history.map((h) => `${h.state}${h.detail ? ` (${h.detail})` : ""}`).join(" -> ")}`);
    }
  }
  if (failures > 0) throw new QueuePathError(`${failures} of ${txs.length} relayed operations did not confirm`);
  const relayed = settled.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  return { relayed, ms: Math.max(...relayed.map((r) => r.doneAt)) - started };
}
