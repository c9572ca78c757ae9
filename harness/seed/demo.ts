import { createPublicClient, createWalletClient, erc20Abi, http, maxUint256, type Address, type Hex, type PublicClient } from "viem";
import { keyAccount } from "../../src/chain/key-account.ts";
import { sepoliaAt } from "../../src/chain/client.ts";
import type { Operation, OperationKind } from "../../src/schemas/operation.ts";
import { ACTION_ROUTES } from "../deployment/index.ts";
import type { DevStack } from "../dev-stack.ts";
import {
  createAccountKeys, createProver, createQueueClient, deposit, findNotes, prepareAction, prepareTransaction, QueueProblemError, recipientOf,
  reviewedFrom, syncPool, waitForReservation, type AccountKeys, type OwnedNote, type PreparedTransaction,
} from "../client/index.ts";
import { SEED_CONFIRMATIONS, SeedError } from "./scenarios.ts";

/** The operation states the demo shows, each by one operation. */
export type SeededState = "accepted" | "submitted" | "included" | "confirmed" | "reverted" | "rejected" | "expired";

export interface SeededOperation {
  id: string;
  /** Its status route: send-status or withdraw-status. */
  kind: OperationKind;
}

export interface SeededAccount {
  /** The dev account (stack.accounts[index]) that deposited. */
  index: number;
  address: Address;
  /** Its shielded keys: the notes below are addressed to them (secrets; this process only). */
  keys: AccountKeys;
  /** Its unspent shielded notes' total by asset address, as the seed left them (the held operations still spend some). */
  balances: Record<Address, bigint>;
}

export interface SeedResult {
  scenario: "demo";
  accounts: SeededAccount[];
  /** One operation in each state. */
  operations: Record<SeededState, SeededOperation>;
  /** A confirmed swap whose reserved output waits for finalize (the reservation is settled). */
  reservation: { operationId: string; reservationId: Hex };
  /** What the seed left held: mining (submitted and included stay) and the relayer (accepted stays). */
  held: { mining: true; relayer: true };
  ms: number;
}

const USDC = (units: number) => BigInt(units) * 1_000_000n;

/**
 * The demo: two dev accounts with shielded balances, then one operation per state, the transient ones
 * last, kept by holding mining and pausing the relayer (POST /api/dev/mining, /api/dev/relayer).
 */
export async function seedDemo(stack: DevStack): Promise<SeedResult> {
  const started = performance.now();
  const queue = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
  const config = await queue.beforePrepare();
  const prover = createProver(await queue.proofFiles(config), queue.reviewed);
  const chain = sepoliaAt(stack.rpcUrl);
  const client = createPublicClient({ chain, transport: http(stack.rpcUrl), pollingInterval: 50 }) as PublicClient;
  const rpc = (method: string, params: unknown[] = []) => client.request({ method, params } as never);
  const dev = async (path: string, body: unknown) => {
    const response = await fetch(`${stack.queueUrl}/api/dev/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    if (!response.ok) throw new SeedError("demo", `POST /api/dev/${path} answered ${response.status}: ${await response.text()}`);
  };
  // Its deposits and relays wait for blocks and the relayer: a stack a test left held would hang here.
  await dev("mining", { mode: "auto" });
  await dev("relayer", { engine: "running" });
  const [usdc, weth] = [config.assets[0]?.address as Address, config.assets[1]?.address as Address];
  const fee = BigInt(config.relayFees.fees.find((f) => f.asset.toLowerCase() === usdc.toLowerCase())?.send ?? "0");
  const deployment = { chainId: config.chainId, poolAddress: config.poolAddress, domain: BigInt(config.domain) };

  // Shielded balances: dev accounts 1 and 2 deposit into notes of their own keys. Alice's first
  // five notes (3 USDC each) pay for the operations below; the rest is what an app shows as balance.
  const plan: Array<{ index: number; deposits: Array<[Address, bigint]> }> = [
    { index: 1, deposits: [...Array.from({ length: 5 }, () => [usdc, USDC(3)] as [Address, bigint]), [usdc, USDC(250)], [weth, 10n ** 17n]] },
    { index: 2, deposits: [[usdc, USDC(1200)], [weth, 5n * 10n ** 17n]] },
  ];
  const holders = plan.map(({ index, deposits }) => ({ index, deposits, account: stack.accounts[index] as DevStack["accounts"][number], keys: createAccountKeys() }));
  // The two accounts deposit side by side (each its own nonces).
  await Promise.all(holders.map(async ({ deposits, account, keys }) => {
    const wallet = createWalletClient({ account: keyAccount(account.privateKey), chain, transport: http(stack.rpcUrl) });
    for (const asset of new Set(deposits.map(([a]) => a))) {
      await client.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: asset, abi: erc20Abi, functionName: "approve", args: [config.poolAddress as Address, maxUint256] }) });
    }
    for (const [asset, amount] of deposits) await deposit({ wallet, client, pool: config.poolAddress as Address, asset, amount, to: recipientOf(keys) });
  }));
  const state = await syncPool({ client, pool: config.poolAddress as Address, fromBlock: BigInt(config.deploymentBlock), levels: config.queue.proof.treeDepth });
  const alice = holders[0] as (typeof holders)[number];
  const spendable = findNotes(alice.keys, state, deployment.domain).filter((n) => n.note.asset.toLowerCase() === usdc.toLowerCase() && n.note.amount === USDC(3));
  const nextNote = (): OwnedNote => spendable.shift() ?? (() => { throw new SeedError("demo", "ran out of seeded notes"); })();
  // A send of one 3 USDC note to a fresh recipient, proved now (the proofs are the seed's cost; the relays then run quickly).
  const prepareSend = async (): Promise<PreparedTransaction> =>
    (await prepareTransaction({ deployment, prover, tree: state.tree, keys: alice.keys, asset: usdc, inputs: [nextNote()], outputs: [{ amount: USDC(3) - fee, to: recipientOf(createAccountKeys()) }], fee, relayer: stack.relayer.address })).transaction;

  // Polls a status until `done`, mining a block when one lacks a confirmation (the demo's stack needs two).
  const until = async (kind: OperationKind, id: string, done: (op: Operation) => boolean, mine = false): Promise<Operation> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const op = await queue.status(kind, id);
      if (done(op)) return op;
      if (op.terminal || Date.now() > deadline) throw new SeedError("demo", `operation ${id} is ${op.state}, not as the scenario needs it: ${JSON.stringify(op.reason)}`);
      if (mine && op.state === "included") await rpc("evm_mine");
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  // An operation is submitted as its transaction is broadcast: a block mined before the node has it would be empty.
  const inMempool = async (op: Operation): Promise<Operation["transactions"][number]> => {
    const attempt = op.transactions[0] as Operation["transactions"][number];
    for (let tries = 0; (await rpc("eth_getTransactionByHash", [attempt.hash])) === null; tries++) {
      if (tries > 200) throw new SeedError("demo", `operation ${op.id}'s transaction ${attempt.hash} never reached the node`);
      await new Promise((r) => setTimeout(r, 25));
    }
    return attempt;
  };
  const is = (state: string) => (op: Operation) => op.state === state;

  // confirmed: a send, to the end. Its answer says how many confirmations the stack counts.
  const confirmed = await queue.submit("send", config, await prepareSend());
  const confirmedOp = await until("send", confirmed.id, is("confirmed"), true);
  if (confirmedOp.requiredConfirmations < SEED_CONFIRMATIONS) {
    throw new SeedError("demo", `its included operation needs a stack counting ${SEED_CONFIRMATIONS} confirmations, and this one counts ${confirmedOp.requiredConfirmations}: start it with relay: { requiredConfirmations: ${SEED_CONFIRMATIONS} } (--confirmations ${SEED_CONFIRMATIONS})`);
  }

  // A reserved output waiting for finalize: a swap (synchronous: settled in its own transaction), not finalized.
  // 2 USDC swapped from a 3 USDC note: the fee and the change come out of the rest.
  const quote = await queue.quote(config, { route: ACTION_ROUTES.swap, assetIn: usdc, assetOut: weth, amountIn: USDC(2) });
  const action = await prepareAction({ config, quote, prover, tree: state.tree, keys: alice.keys, inputs: [nextNote()] });
  const acted = await until("withdraw", (await queue.submitAction(config, action)).id, is("confirmed"), true);
  const reservationId = acted.action?.reservationId as Hex;
  await waitForReservation({ client, pool: config.poolAddress as Address, reservationId });
  // The status answer's reservation is refreshed in the background: an app reads it there.
  for (let tries = 0; (await queue.status("withdraw", acted.id)).action?.reservation?.state !== "settled"; tries++) {
    if (tries > 200) throw new SeedError("demo", `the status of ${acted.id} never showed its reservation settled`);
    await new Promise((r) => setTimeout(r, 25));
  }

  // Proofs are the seed's cost (about 2 s each when real): five, each failed one's notes used again.
  // reverted: the next relay is mined in a block where the verifier refuses its proof (its notes stay unspent).
  const reusable = await prepareSend();
  stack.faults.revertNextRelay();
  const reverted = await until("send", (await queue.submit("send", config, reusable)).id, is("reverted"), true);

  // rejected: a proof altered after proving, refused at admission and kept by the dev stack (it holds no nullifier).
  const [forInclusion, forSubmission] = [await prepareSend(), await prepareSend()];
  const altered = { ...forInclusion, proof: { ...forInclusion.proof, a: [forInclusion.proof.a[0], forInclusion.proof.a[1] ^ 1n] as [bigint, bigint] } };
  const refusal = await queue.submit("send", config, altered).then(
    () => { throw new SeedError("demo", "an altered proof was accepted"); },
    (error: unknown) => error,
  );
  const rejectedId = refusal instanceof QueueProblemError ? (refusal.problem as { operationId?: string }).operationId : undefined;
  if (rejectedId === undefined) {
    const kept = refusal instanceof QueueProblemError ? "the stack keeps no refused submission (relay.keepRejected is 0)" : String(refusal);
    throw new SeedError("demo", `its rejected operation was not kept: ${kept}`);
  }

  // The rest waits: mining held from here on.
  await dev("mining", { mode: "hold" });

  // expired: the reverted send again (a failed operation's notes are free), its transaction outbid by another of the relayer key at the same nonce, mined instead.
  const expiring = await until("send", (await queue.submit("send", config, reusable)).id, is("submitted"));
  const attempt = await inMempool(expiring);
  await rpc("anvil_impersonateAccount", [stack.relayer.address]);
  try {
    await rpc("eth_sendTransaction", [{ from: stack.relayer.address, to: stack.relayer.address, value: "0x0", gas: "0x5208", nonce: `0x${attempt.nonce.toString(16)}`, maxFeePerGas: `0x${(BigInt(attempt.maxFeePerGas) * 3n).toString(16)}`, maxPriorityFeePerGas: `0x${(BigInt(attempt.maxPriorityFeePerGas) * 3n).toString(16)}` }]);
  } finally {
    await rpc("anvil_stopImpersonatingAccount", [stack.relayer.address]);
  }
  await rpc("evm_mine");
  const expired = await until("send", expiring.id, is("expired"));

  // included: mined in a block with no block on it yet.
  const including = await until("send", (await queue.submit("send", config, forInclusion)).id, is("submitted"));
  await inMempool(including);
  await rpc("evm_mine");
  const included = await until("send", including.id, is("included"));
  // submitted: broadcast, waiting for a block.
  const submitted = await until("send", (await queue.submit("send", config, forSubmission)).id, is("submitted"));
  // accepted: the reverted send once more (expired, its notes are free again), the relayer paused, so it is never picked up (nor are the two above moved on).
  await dev("relayer", { engine: "paused" });
  const accepted = await until("send", (await queue.submit("send", config, reusable)).id, is("accepted"));

  const after = await syncPool({ client, pool: config.poolAddress as Address, fromBlock: BigInt(config.deploymentBlock), levels: config.queue.proof.treeDepth });
  const accounts = holders.map(({ index, account, keys }) => {
    const balances: Record<Address, bigint> = {};
    for (const { note } of findNotes(keys, after, deployment.domain).filter((n) => !n.spent)) balances[note.asset] = (balances[note.asset] ?? 0n) + note.amount;
    return { index, address: account.address, keys, balances };
  });
  const send = (op: { id: string }): SeededOperation => ({ id: op.id, kind: "send" });
  return {
    scenario: "demo",
    accounts,
    operations: {
      accepted: send(accepted),
      submitted: send(submitted),
      included: send(included),
      confirmed: send(confirmedOp),
      reverted: send(reverted),
      rejected: { id: rejectedId, kind: "send" },
      expired: send(expired),
    },
    reservation: { operationId: acted.id, reservationId },
    held: { mining: true, relayer: true },
    ms: Math.round(performance.now() - started),
  };
}
