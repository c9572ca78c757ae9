import { describe, expect, it } from "vitest";
import { BaseError, decodeErrorResult, encodeDeployData, zeroAddress, type Address, type Hex } from "viem";
import { loadFixtures } from "../harness/deployment/index.ts";
import type { DevStack } from "../harness/index.ts";
import {
  closeProvers,
  createAccountKeys,
  createQueueClient,
  FeeTooHighError,
  InvalidRecipientError,
  poolAbi,
  prepareTransaction,
  randomFieldElement,
  recipientOf,
  type PreparedTransaction,
  type Prover,
} from "../harness/client/index.ts";
import { revertName } from "./support/chain.ts";
import { GAS, type poolFixture } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// Protocol edges that failed open or wasted (issue 8, item 11), on a real stack with real proofs:
// refused by the client before proving, and by the Pool whatever a client sends.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;

withQueueStack({ timeout: 60_000 }, (started) => ({ stack, pool } = started));

/** What the Pool answers to a transact from dev account `from`: "accepted" or its error's name. */
async function outcome(from: number, tx: PreparedTransaction): Promise<string> {
  const { wallet, public: client } = pool.user(from);
  try {
    await client.simulateContract({ account: wallet.account, address: pool.deployment.poolAddress, abi: poolAbi, functionName: "transact", args: [tx.proof, tx.publicInputs, tx.extData], gas: GAS });
  } catch (error) {
    return revertName(error);
  }
  return "accepted";
}

async function transact(from: number, tx: PreparedTransaction) {
  const { wallet, public: client } = pool.user(from);
  const hash = await wallet.writeContract({ address: pool.deployment.poolAddress, abi: poolAbi, functionName: "transact", args: [tx.proof, tx.publicInputs, tx.extData], gas: GAS });
  return client.waitForTransactionReceipt({ hash });
}

const isKnownRoot = (root: bigint) => pool.user(0).public.readContract({ address: pool.deployment.poolAddress, abi: poolAbi, functionName: "isKnownRoot", args: [root] });

describe("the client refuses before proving", () => {
  it("a withdrawal without a recipient, to 0x0 or to the Pool, and a fee above the withdrawn amount", async () => {
    const keys = createAccountKeys();
    const { state, input } = await pool.fundedNote(4, keys, pool.usdc("5"));
    let proofs = 0;
    const counting: Prover = { prove: (signals) => (proofs++, pool.prover.prove(signals)), close: closeProvers };
    const withdraw = (change: { recipient?: Address; extAmount: bigint; fee: bigint }) =>
      prepareTransaction({
        deployment: pool.deployment, asset: pool.asset, prover: counting, tree: state.tree, keys, inputs: [input],
        outputs: [{ amount: pool.usdc("5") + change.extAmount - change.fee, to: recipientOf(keys) }],
        relayer: stack.relayer.address, ...change,
      });
    const payee = "0x000000000000000000000000000000000000dEaD" as Address;
    await expect(withdraw({ extAmount: -pool.usdc("1"), fee: 0n })).rejects.toThrow(InvalidRecipientError);
    await expect(withdraw({ recipient: zeroAddress, extAmount: -pool.usdc("1"), fee: 0n })).rejects.toThrow(InvalidRecipientError);
    await expect(withdraw({ recipient: pool.deployment.poolAddress, extAmount: -pool.usdc("1"), fee: 0n })).rejects.toThrow(/the Pool itself/);
    await expect(withdraw({ recipient: payee, extAmount: -pool.usdc("1"), fee: pool.usdc("1") + 1n })).rejects.toThrow(FeeTooHighError);
    await expect(withdraw({ recipient: payee, extAmount: -pool.usdc("1"), fee: -1n })).rejects.toThrow(FeeTooHighError);
    expect(proofs).toBe(0);
    // At the edge (fee = withdrawn amount) it proves.
    const { transaction } = await withdraw({ recipient: payee, extAmount: -pool.usdc("1"), fee: pool.usdc("1") });
    expect(proofs).toBe(1);
    expect(transaction.extData.recipient).toBe(payee);
  });
});

describe("the Pool refuses", () => {
  it("a withdrawal to itself: WithdrawalToPool", async () => {
    const keys = createAccountKeys();
    const { state, input } = await pool.fundedNote(4, keys, pool.usdc("5"));
    const request = { tree: state.tree, keys, inputs: [input], outputs: [{ amount: pool.usdc("4"), to: recipientOf(keys) }], extAmount: -pool.usdc("1"), recipient: stack.accounts[4]?.address as Address };
    const toPool = await pool.proveUnchecked(request, { recipient: pool.deployment.poolAddress });
    expect(await outcome(4, toPool)).toBe("WithdrawalToPool");
    // The same note withdrawn elsewhere is accepted: only the recipient differs.
    expect(await outcome(4, await pool.proveUnchecked(request, {}))).toBe("accepted");
  });

  it("a tree depth other than the circuit's 24: InvalidTreeDepth", async () => {
    const { contracts } = await loadFixtures();
    const { abi, bytecode } = contracts.Pool;
    const client = pool.user(0).public;
    const read = <T>(functionName: string) => client.readContract({ address: pool.deployment.poolAddress, abi, functionName }) as Promise<T>;
    const companions = await Promise.all(["verifier", "hasher", "commitmentHasher", "accountRegistry", "receiveDirectory", "supportedAssets"].map((f) => read<unknown>(f)));
    const deployWith = async (levels: number): Promise<string> => {
      const data = encodeDeployData({ abi, bytecode, args: [...companions, levels] as never });
      try {
        await client.call({ account: pool.user(0).account, data, gas: 20_000_000n });
        return "deployed";
      } catch (error) {
        const revert = (error as BaseError).walk((e) => typeof (e as { data?: unknown }).data === "string") as { data: Hex } | null;
        if (!revert) throw error;
        const decoded = decodeErrorResult({ abi, data: revert.data });
        return `${decoded.errorName}(${(decoded.args ?? []).join(", ")})`;
      }
    };
    expect(await deployWith(24)).toBe("deployed");
    expect(await deployWith(20)).toBe("InvalidTreeDepth(20)");
    expect(await deployWith(32)).toBe("InvalidTreeDepth(32)"); // 2^32 leaves would even overflow the insert
    expect(await deployWith(0)).toBe("InvalidTreeDepth(0)");
  });
});

describe("roots", () => {
  it("a burst of 101 one-unit deposits does not invalidate a proof made before it, sent straight to the Pool or through the queue", async () => {
    const keys = createAccountKeys();
    const direct = await pool.fundedNote(4, keys, pool.usdc("3"));
    const directTx = (await pool.prove({ tree: direct.state.tree, keys, inputs: [direct.input], outputs: [{ amount: pool.usdc("3"), to: recipientOf(keys) }] })).transaction;
    const queue = createQueueClient({ baseUrl: stack.queueUrl, reviewed: pool.reviewed });
    const config = await queue.beforePrepare();
    const fee = BigInt(config.relayFees.fees.find((f) => f.asset === pool.asset)?.send ?? "0");
    const relayed = await pool.fundedNote(4, keys, pool.usdc("3"));
    const relayedTx = (await pool.prove({ tree: relayed.state.tree, keys, inputs: [relayed.input], outputs: [{ amount: pool.usdc("3") - fee, to: recipientOf(keys) }], fee, relayer: stack.relayer.address })).transaction;

    const deposits = await pool.depositBurst(5, 101);
    expect(deposits).toHaveLength(101);
    const state = await pool.sync();
    expect(await pool.user(0).public.readContract({ address: pool.deployment.poolAddress, abi: poolAbi, functionName: "getLastRoot" })).toBe(state.tree.root);
    expect(state.tree.root).not.toBe(directTx.publicInputs.root);
    expect(await isKnownRoot(directTx.publicInputs.root)).toBe(true);
    expect(await isKnownRoot(relayedTx.publicInputs.root)).toBe(true);
    expect(await isKnownRoot(randomFieldElement())).toBe(false);
    expect(await isKnownRoot(0n)).toBe(false);

    expect(await outcome(4, directTx)).toBe("accepted");
    expect((await transact(4, directTx)).status).toBe("success");
    const op = await queue.waitFor("send", (await queue.submit("send", config, relayedTx)).id);
    expect(op.state).toBe("confirmed");
  });
});
