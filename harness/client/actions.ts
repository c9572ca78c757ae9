import { parseAbi, type Account, type Address, type Chain, type Hex, type PublicClient, type TransactionReceipt, type Transport, type WalletClient } from "viem";
import { Quote } from "../../src/schemas/quote.ts";
import { readReservation, type ReservationState } from "../../src/chain/reservation-tracker.ts";
import type { ActionTerms } from "../../src/chain/ext-data.ts";
import type { DeploymentConfig, ExternalActionRoute } from "../../src/config/deployment-config.ts";
import { randomFieldElement } from "./field.ts";
import { recipientOf, type AccountKeys } from "./keys.ts";
import type { MerkleTree } from "./merkle-tree.ts";
import { commitmentOf, precommitmentOf, type Note } from "./note.ts";
import type { Prover } from "./prover.ts";
import { poolAbi } from "./pool-abi.ts";
import { prepareTransaction, TransactionShapeError, type Deployment, type PreparedTransaction, type SpendInput } from "./transaction.ts";

export { Quote };

/** An action ready for the queue: the proof and public fields, the terms, and what stays with the client. */
export interface PreparedAction {
  transaction: PreparedTransaction;
  /** The terms the proof binds, with the quote's id (qt_…). */
  action: Omit<ActionTerms, "quoteId"> & { quoteId: string };
  /** Secret: the blinding of the output note's precommitment. Keep it: it opens the finalized note. */
  output: { blinding: bigint; precommitment: bigint; asset: Address; refundAsset: Address };
}

/**
 * The proof of an action with a quote's terms: `inputs` (notes of `keys`, in the quote's input asset)
 * pay `amountIn` to the route's adapter and the quoted action fee to the relayer; what is left comes
 * back to `keys` as change. The output note's precommitment is chosen here, from a fresh blinding
 * that never leaves the client.
 */
export async function prepareAction(args: {
  config: DeploymentConfig;
  quote: Quote;
  prover: Prover;
  tree: MerkleTree;
  keys: AccountKeys;
  inputs: SpendInput[];
  /**
   * The relay fee, in the input asset: at least the quote's action fee (the default). A relayer finalizes
   * the refund of a failed action only when this also paid for it (config relayFees.actions: the route's
   * action plus finalize fee in the input asset); otherwise the owner finalizes a refund itself.
   */
  fee?: bigint;
}): Promise<PreparedAction> {
  const { config, quote, keys } = args;
  const route = config.routes.find((r): r is ExternalActionRoute => r.action === "external" && r.id === quote.route);
  if (!route) throw new TransactionShapeError(`quote ${quote.quoteId} names route ${quote.route}, which the config does not offer`);
  const amountIn = BigInt(quote.amountIn);
  const fee = args.fee ?? BigInt(quote.fees.action);
  if (fee < BigInt(quote.fees.action)) throw new TransactionShapeError(`fee ${fee} is below the quoted action fee ${quote.fees.action}`);
  const total = args.inputs.reduce((sum, input) => sum + input.note.amount, 0n);
  const change = total - amountIn - fee;
  if (change < 0n) throw new TransactionShapeError(`the inputs hold ${total}, the action needs ${amountIn} plus the fee ${fee}`);
  const blinding = randomFieldElement();
  const precommitment = precommitmentOf({ ownerPublicKey: keys.notePublicKey, blinding });
  const terms: ActionTerms = {
    routeId: quote.route as Hex,
    outputAsset: quote.assetOut as Address,
    minOutput: BigInt(quote.minOutput),
    outputPrecommitment: precommitment,
    deadline: BigInt(quote.deadline),
    finalizeFee: BigInt(quote.fees.finalize),
    quoteId: `0x${quote.quoteId.slice(3)}` as Hex,
    // The quoting relayer finalizes it (and alone, for the fee, until deadline + the Pool's grace).
    finalizer: quote.relayer as Address,
  };
  const deployment: Deployment = { chainId: config.chainId, poolAddress: config.poolAddress as Address, domain: BigInt(config.domain) };
  const { transaction } = await prepareTransaction({
    deployment,
    prover: args.prover,
    tree: args.tree,
    keys,
    asset: quote.assetIn as Address,
    inputs: args.inputs,
    outputs: change > 0n ? [{ amount: change, to: recipientOf(keys) }] : [],
    extAmount: -amountIn,
    fee,
    recipient: route.adapter.address as Address,
    relayer: quote.relayer as Address,
    action: terms,
  });
  return { transaction, action: { ...terms, quoteId: quote.quoteId }, output: { blinding, precommitment, asset: quote.assetOut as Address, refundAsset: quote.assetIn as Address } };
}

const finalizedEvent = parseAbi(["event ReservationFinalized(bytes32 indexed reservationId, bool refunded, address asset, uint256 amount, uint256 commitment, uint256 index)"])[0];

export { readReservation, type ReservationState };

/** Polls until the reservation can be finalized (settled, failed or expired) or is finalized. */
export async function waitForReservation(args: { client: PublicClient; pool: Address; reservationId: Hex; timeoutMs?: number; intervalMs?: number }) {
  const deadline = Date.now() + (args.timeoutMs ?? 60_000);
  for (;;) {
    const reservation = await readReservation(args.client, args.pool, args.reservationId);
    if (reservation.state !== "pending" && reservation.state !== "none") return reservation;
    if (Date.now() > deadline) return reservation;
    await new Promise((r) => setTimeout(r, args.intervalMs ?? 200));
  }
}

/** Gas of a finalize, set rather than estimated (it inserts into a Poseidon tree: about 1.0M). */
export const FINALIZE_GAS = 2_000_000n;

/**
 * Finalizes a reservation from your own account (Pool.finalize), without the relayer: a refund, which
 * pays no fee, or one the relayer refuses (fee_too_low). A settled one that pays a fee can be finalized
 * by anyone but its finalizer only after its deadline plus the Pool's FINALIZE_GRACE, and the fee then
 * goes to you. Throws, with the Pool's error by name, when the Pool refuses it.
 */
export async function finalizeReservation(args: { wallet: WalletClient<Transport, Chain | undefined, Account>; client: PublicClient; pool: Address; reservationId: Hex }): Promise<TransactionReceipt> {
  const call = { address: args.pool, abi: poolAbi, functionName: "finalize", args: [args.reservationId], gas: FINALIZE_GAS } as const;
  await args.client.simulateContract({ ...call, account: args.wallet.account });
  const receipt = await args.client.waitForTransactionReceipt({ hash: await args.wallet.writeContract({ ...call, chain: args.wallet.chain }) });
  if (receipt.status !== "success") throw new Error(`finalize of ${args.reservationId} reverted in ${receipt.transactionHash}`);
  return receipt;
}

/**
 * The note a finalize inserted, opened with the blinding kept from prepareAction: the amount and asset
 * come from the Pool's event, and the commitment is checked against them.
 */
export async function finalizedNote(args: { client: PublicClient; pool: Address; reservationId: Hex; keys: AccountKeys; output: PreparedAction["output"]; fromBlock?: bigint }): Promise<{ note: Note; leafIndex: number; refunded: boolean }> {
  const logs = await args.client.getLogs({ address: args.pool, event: finalizedEvent, args: { reservationId: args.reservationId }, fromBlock: args.fromBlock ?? 0n });
  const log = logs.at(-1);
  if (!log) throw new Error(`reservation ${args.reservationId} is not finalized yet`);
  const { refunded, asset, amount, commitment, index } = log.args as { refunded: boolean; asset: Address; amount: bigint; commitment: bigint; index: bigint };
  const note: Note = { amount, asset, ownerPublicKey: args.keys.notePublicKey, blinding: args.output.blinding };
  if (commitmentOf(note) !== commitment) throw new Error(`the finalized note of ${args.reservationId} is not for these keys and blinding`);
  return { note, leafIndex: Number(index), refunded };
}
