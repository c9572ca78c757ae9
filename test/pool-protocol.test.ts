import { beforeAll, describe, expect, it } from "vitest";
import { erc20Abi, zeroAddress, type Address, type Hex } from "viem";
import type { DevStack } from "../harness/index.ts";
import {
  createAccountKeys,
  findNotes,
  poolAbi,
  prepareTransaction,
  randomFieldElement,
  recipientOf,
  type AccountKeys,
  type Deployment,
  type Note,
  type PreparedTransaction,
  type Prover,
} from "../harness/client/index.ts";
import { revertName } from "./support/chain.ts";
import { GAS, type poolFixture } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// Real chain, real Pool, real Groth16 proofs from the proof files the queue serves. Transactions go
// straight to the Pool here; the relay routes come with the relay pipeline.
let stack: DevStack;
let fixture: Awaited<ReturnType<typeof poolFixture>>;
let prover: Prover;
let deployment: Deployment;
let asset: Address;

// The fixture fetches and checks the served proof files.
withQueueStack({}, (started) => {
  ({ stack, pool: fixture } = started);
  ({ prover, deployment, asset } = fixture);
});

const user = (i: number) => fixture.user(i);
const usdc = (x: string) => fixture.usdc(x);
const balanceOf = (who: Address) => user(0).public.readContract({ address: asset, abi: erc20Abi, functionName: "balanceOf", args: [who] });
const sync = () => fixture.sync();
const deposit = async (from: number, keys: AccountKeys, amount: bigint) => void (await fixture.deposit(from, keys, amount));

/** Submits as dev account `from` (who is also the relayer the fee is paid to). */
async function submit(from: number, tx: PreparedTransaction) {
  const { wallet, public: client } = user(from);
  const args = [tx.proof, tx.publicInputs, tx.extData] as const;
  await client.simulateContract({ account: wallet.account, address: deployment.poolAddress, abi: poolAbi, functionName: "transact", args, gas: GAS });
  const hash = await wallet.writeContract({ address: deployment.poolAddress, abi: poolAbi, functionName: "transact", args, gas: GAS });
  return client.waitForTransactionReceipt({ hash });
}

async function rejection(from: number, tx: PreparedTransaction): Promise<string> {
  const { wallet, public: client } = user(from);
  try {
    await client.simulateContract({
      account: wallet.account,
      address: deployment.poolAddress,
      abi: poolAbi,
      functionName: "transact",
      args: [tx.proof, tx.publicInputs, tx.extData],
      gas: GAS,
    });
  } catch (error) {
    return revertName(error);
  }
  return "accepted";
}

describe("a private payment, end to end", () => {
  const alice = createAccountKeys();
  const bob = createAccountKeys();
  const relayerIndex = 3;
  let relayer: Address;
  let spentSend: PreparedTransaction;
  // Here, not in the first test: a refusal test run alone (-t) pays the same relayer.
  beforeAll(() => {
    relayer = user(relayerIndex).account.address;
  });

  it("registers keys, deposits, sends privately, and the recipient finds and withdraws", async () => {
    // Publish both accounts' public keys in the AccountRegistry.
    for (const [i, keys] of [[1, alice], [2, bob]] as const) {
      const { wallet, public: client } = user(i);
      const hash = await wallet.writeContract({
        address: stack.manifest.accountRegistry.address,
        abi: stack.manifest.accountRegistry.abi,
        functionName: "register",
        args: [keys.notePublicKey, keys.encryption.publicKey],
      });
      expect((await client.waitForTransactionReceipt({ hash })).status).toBe("success");
    }
    const bobPublished = (await user(0).public.readContract({
      address: stack.manifest.accountRegistry.address,
      abi: stack.manifest.accountRegistry.abi,
      functionName: "accountOf",
      args: [user(2).account.address],
    })) as { notePublicKey: bigint; encryptionPublicKey: Hex };

    const poolBefore = await balanceOf(deployment.poolAddress);
    await deposit(1, alice, usdc("100"));
    expect(await balanceOf(deployment.poolAddress)).toBe(poolBefore + usdc("100"));

    // Alice finds her deposit and sends 60 to Bob (keys as published), 40 minus the fee back to herself.
    let state = await sync();
    expect(state.tree.root).toBe(await user(0).public.readContract({ address: deployment.poolAddress, abi: poolAbi, functionName: "getLastRoot" }));
    const [aliceNote] = findNotes(alice, state, deployment.domain);
    expect(aliceNote?.note.amount).toBe(usdc("100"));
    const fee = usdc("0.01");
    const send = await prepareTransaction({
      deployment, prover, tree: state.tree, keys: alice, asset,
      inputs: [{ note: aliceNote!.note, leafIndex: aliceNote!.leafIndex }],
      outputs: [
        { amount: usdc("60"), to: { notePublicKey: bobPublished.notePublicKey, encryptionPublicKey: bobPublished.encryptionPublicKey } },
        { amount: usdc("40") - fee, to: recipientOf(alice) },
      ],
      fee, relayer,
    });
    // What leaves the client holds nothing secret.
    const wire = JSON.stringify(send.transaction, (_, v) => (typeof v === "bigint" ? v.toString() : v));
    for (const secret of [alice.spendingKey, aliceNote!.note.blinding, send.outputNotes[0].blinding, send.outputNotes[1].blinding]) {
      expect(wire).not.toContain(secret.toString());
      expect(wire).not.toContain(secret.toString(16));
    }
    expect(wire).not.toContain(alice.encryption.secretKey.slice(2));

    const relayerBefore = await balanceOf(relayer);
    expect((await submit(relayerIndex, send.transaction)).status).toBe("success");
    expect(await balanceOf(relayer)).toBe(relayerBefore + fee);
    spentSend = send.transaction;

    // Bob finds the note sent to him; Alice sees her change and her spent deposit.
    state = await sync();
    expect(state.tree.root).toBe(await user(0).public.readContract({ address: deployment.poolAddress, abi: poolAbi, functionName: "getLastRoot" }));
    const bobNotes = findNotes(bob, state, deployment.domain);
    expect(bobNotes.map((n) => n.note.amount)).toEqual([usdc("60")]);
    const aliceNotes = findNotes(alice, state, deployment.domain);
    expect(aliceNotes.map((n) => [n.note.amount, n.spent])).toEqual([
      [usdc("100"), true],
      [usdc("40") - fee, false],
    ]);

    // Bob withdraws 50 to a fresh address; 10 minus the fee stays with him.
    const payee = "0x00000000000000000000000000000000000b0b0b" as Address;
    const withdraw = await prepareTransaction({
      deployment, prover, tree: state.tree, keys: bob, asset,
      inputs: [{ note: bobNotes[0]!.note, leafIndex: bobNotes[0]!.leafIndex }],
      outputs: [{ amount: usdc("10") - fee, to: recipientOf(bob) }],
      extAmount: -usdc("50"), fee, recipient: payee, relayer,
    });
    const poolBeforeWithdraw = await balanceOf(deployment.poolAddress);
    expect((await submit(relayerIndex, withdraw.transaction)).status).toBe("success");
    expect(await balanceOf(payee)).toBe(usdc("50"));
    expect(await balanceOf(deployment.poolAddress)).toBe(poolBeforeWithdraw - usdc("50") - fee);
    state = await sync();
    expect(findNotes(bob, state, deployment.domain).map((n) => [n.note.amount, n.spent])).toEqual([
      [usdc("60"), true],
      [usdc("10") - fee, false],
    ]);
  });

  describe("is refused by the Pool, with a named error", () => {
    let fresh: { note: Note; leafIndex: number };
    let state: Awaited<ReturnType<typeof sync>>;
    const carol = createAccountKeys();
    beforeAll(async () => {
      await deposit(4, carol, usdc("5"));
      state = await sync();
      const [owned] = findNotes(carol, state, deployment.domain);
      fresh = { note: owned!.note, leafIndex: owned!.leafIndex };
    }, 60_000);

    const sendAll = (overrides: Partial<Parameters<typeof prepareTransaction>[0]> = {}) =>
      prepareTransaction({
        deployment, prover, tree: state.tree, keys: carol, asset,
        inputs: [fresh], outputs: [{ amount: usdc("5"), to: recipientOf(carol) }],
        ...overrides,
      });
    // One valid send paying the relayer a fee, proved once for the three tests that tamper with it or
    // send it from the wrong account (a proof takes seconds; the Pool's answer is what each checks).
    let paid: ReturnType<typeof sendAll> | undefined;
    const paidSend = () => (paid ??= sendAll({ outputs: [{ amount: usdc("4"), to: recipientOf(carol) }], fee: usdc("1"), relayer }));

    it("a double spend: NullifierSpent", async () => {
      expect(await rejection(relayerIndex, spentSend)).toBe("NullifierSpent");
    });

    it("an unknown root: UnknownRoot", async () => {
      const { transaction } = await paidSend();
      expect(await rejection(relayerIndex, { ...transaction, publicInputs: { ...transaction.publicInputs, root: randomFieldElement() } })).toBe("UnknownRoot");
    });

    it("a tampered public input: InvalidProof (proof) or ExtDataHashMismatch (execution fields)", async () => {
      const { transaction } = await paidSend();
      const [c0, c1] = transaction.publicInputs.outputCommitments;
      expect(await rejection(relayerIndex, { ...transaction, publicInputs: { ...transaction.publicInputs, outputCommitments: [c1, c0] } })).toBe("InvalidProof");
      expect(await rejection(relayerIndex, { ...transaction, extData: { ...transaction.extData, recipient: relayer } })).toBe("ExtDataHashMismatch");
      expect(await rejection(relayerIndex, transaction)).toBe("accepted"); // the untampered one passes
    });

    it("a proof for another domain or another Pool", async () => {
      const otherDomain = await sendAll({ deployment: { ...deployment, domain: deployment.domain + 1n } });
      expect(await rejection(relayerIndex, otherDomain.transaction)).toBe("WrongDomain");
      // Claiming our domain does not rescue a proof made for another: the domain is in the nullifiers.
      const claimed = { ...otherDomain.transaction, publicInputs: { ...otherDomain.transaction.publicInputs, domain: deployment.domain } };
      expect(await rejection(relayerIndex, claimed)).not.toBe("accepted");
      const otherPool = await sendAll({ deployment: { ...deployment, poolAddress: zeroAddress } });
      expect(await rejection(relayerIndex, otherPool.transaction)).toBe("ExtDataHashMismatch");
      const otherChain = await sendAll({ deployment: { ...deployment, chainId: 1 } });
      expect(await rejection(relayerIndex, otherChain.transaction)).toBe("ExtDataHashMismatch");
    });

    it("a fee above the withdrawn amount: FeeTooHigh", async () => {
      // The client refuses to prove it (test/protocol-edges.test.ts); a client without that check can:
      // proved as a withdrawal of 3 without fee, sent as 1 withdrawn and a fee of 2 (same publicAmount).
      const transaction = await fixture.proveUnchecked(
        { tree: state.tree, keys: carol, inputs: [fresh], outputs: [{ amount: usdc("2"), to: recipientOf(carol) }], extAmount: -usdc("3"), recipient: relayer, relayer },
        { extAmount: -usdc("1"), fee: usdc("2") },
      );
      expect(await rejection(relayerIndex, transaction)).toBe("FeeTooHigh");
    });

    it("a fee paid to someone other than the submitter: RelayerMismatch", async () => {
      const { transaction } = await paidSend();
      expect(await rejection(relayerIndex + 1, transaction)).toBe("RelayerMismatch");
    });
  });
});
