import { TransactionReceiptNotFoundError, zeroAddress, type Address, type Hex } from "viem";
import { actionReadAbi } from "../chain/abi.ts";
import type { DeploymentConfig } from "../config/deployment-config.ts";
import { ProblemError } from "../problem.ts";
import type { CheckContext } from "./check-context.ts";
import type { FinalizeRequest } from "../schemas/request.ts";
import type { OperationStore } from "../store/types.ts";
import { reservationIdOf } from "../chain/ext-data.ts";
import { Quote } from "../schemas/quote.ts";
import { externalRoute, feeEntry } from "./action-routes.ts";
import { readReservation } from "../chain/reservation-tracker.ts";

/** What keeps two live finalizes of one reservation apart: it is claimed like a nullifier. */
export const reservationClaim = (reservationId: string) => `reservation:${reservationId}`;

export type Reservation = Awaited<ReturnType<typeof readReservation>>;
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
/** What the store knows of an action: whether this runtime relayed it (minedActions) or quoted its terms (quotesWithTerms). */
type ActionRecords = Pick<OperationStore, "minedActions" | "quotesWithTerms">;

/**
 * The reservation, as the Pool has it now: unknown (404), already finalized (409), or pending with its
 * deadline not passed (409: the fill may still come). A settled, failed, or expired pending one can be
 * finalized; the last is refunded.
 */
export async function checkReservation({ chain, config }: CheckContext, request: FinalizeRequest): Promise<Reservation> {
  const id = request.reservationId as Hex;
  const reservation = await readReservation(chain, config.poolAddress as Address, id);
  const { state, deadline, blockTimestamp } = reservation;
  if (state === "none") throw new ProblemError("reservation_not_found", `the Pool has no reservation ${id}`);
  if (state === "finalized") throw new ProblemError("already_finalized", `reservation ${id} is already finalized`);
  if (state === "pending") {
    throw new ProblemError("reservation_not_settled", `reservation ${id} is not settled yet: its route may still fill it until ${new Date(Number(deadline) * 1000).toISOString()}, and after that it is refunded`, {
      extensions: { deadline: deadline.toString() },
      headers: { "retry-after": String(Math.max(1, Math.min(60, Number(deadline - blockTimestamp)))) },
    });
  }
  return reservation;
}

/** The finalize fee this runtime charges for a route in an asset (config relayFees.actions): none configured, none finalized. */
const configuredFinalizeFee = (config: DeploymentConfig, routeId: string, asset: string) => BigInt(feeEntry(config, externalRoute(config, routeId), asset).finalize);

/** The Pool's FINALIZE_GRACE (seconds): read from the Pool, which enforces it. */
const finalizeGrace = ({ chain, config }: CheckContext) => chain.readContract({ address: config.poolAddress as Address, abi: actionReadAbi, functionName: "FINALIZE_GRACE" });

/**
 * How long before its finalizer's window ends a fee-paying finalize is still relayed: the time to sign,
 * broadcast and mine it, replacements included (the engine checks again before each signature). Mined
 * after the window, any copy of it could take the fee, and the relayer would pay the gas for nothing.
 */
export const FINALIZE_WINDOW_MARGIN_SECONDS = 300n;

const isoTime = (unixSeconds: bigint) => new Date(Number(unixSeconds) * 1000).toISOString();

/**
 * A finalize costs the relayer a transaction (about 1.0M gas: a tree insertion): it is relayed only when
 * paid for, and only when the fee is surely this relayer's.
 *
 * A settled reservation pays its finalizeFee (at most its output) to whoever finalizes it, but only its
 * finalizer may until deadline + FINALIZE_GRACE. So:
 * - naming this relayer, its fee above 0, its window open for FINALIZE_WINDOW_MARGIN_SECONDS more: relayed
 *   at the fee it carries, whatever the finalize fee is now, when this runtime relayed its action or signed
 *   a quote of its terms (that fee was its own quote; refusing it would lock the owner's output until the
 *   window ends). Any other names this relayer by its own choice (the Pool lets a self-relayed action name
 *   any finalizer): it is priced by the schedule, its fee at least this runtime's finalize fee;
 * - a fee anyone may take (finalizer 0x0, or the window over) or of 0: answered as a fee of 0, 422
 *   fee_too_low, and its owner finalizes it now, paid the fee;
 * - this relayer's window closing too soon to be safe, or another finalizer's: 422 fee_too_low naming
 *   when the owner may finalize (finalizableByOwnerAt), unless that fee covers this runtime's finalize
 *   fee (then the simulation answers FinalizerOnly for another's).
 *
 * A refund pays no fee: it is relayed only for an action this runtime relayed itself, whose fee covered
 * both the action and the refund (the action and finalize fees of its route in the input asset).
 */
export async function checkFinalizeFee(context: CheckContext, request: FinalizeRequest, reservation: Reservation, operations: ActionRecords): Promise<void> {
  if (reservation.state === "settled") return checkSettledFee(context, request, reservation, operations);
  const id = request.reservationId;
  const entry = feeEntry(context.config, externalRoute(context.config, reservation.routeId), reservation.inputAsset);
  const minimum = BigInt(entry.action) + BigInt(entry.finalize);
  const paid = await relayedActionFee(context, id as Hex, reservation, operations);
  if (paid === undefined || paid < minimum) {
    const why = paid === undefined ? "an action this runtime did not relay" : `its action paid a fee of ${paid}`;
    throw new ProblemError("fee_too_low", `reservation ${id} is a refund, which pays no fee, of ${why}: this runtime finalizes a refund only when its action's fee covered the action and a finalize (${entry.action} + ${entry.finalize} = ${minimum} in ${reservation.inputAsset}); its owner can finalize it now with Pool.finalize (a refund pays no fee: anyone may, at any time)`, {
      extensions: { fee: (paid ?? 0n).toString(), minimumFee: minimum.toString() },
    });
  }
}

async function checkSettledFee(context: CheckContext, request: FinalizeRequest, reservation: Reservation, operations: ActionRecords): Promise<void> {
  const id = request.reservationId;
  const minimum = configuredFinalizeFee(context.config, reservation.routeId, reservation.outputAsset);
  const fee = reservation.finalizeFee < reservation.amountOut ? reservation.finalizeFee : reservation.amountOut;
  const ours = same(reservation.finalizer, context.relayer);
  const until = fee === 0n || reservation.finalizer === zeroAddress ? null : reservation.deadline + (await finalizeGrace(context));
  if (until === null || reservation.blockTimestamp > until) {
    // Nobody's fee, or anyone's: a copy of the relayer's finalize, mined first, would take it.
    const anyones = until === null ? "its finalizer is 0x0" : `its finalizer's window, deadline + the Pool's FINALIZE_GRACE, ended at ${isoTime(until)}`;
    const what = fee === 0n ? "pays a finalize fee of 0" : `pays a finalize fee of ${fee} that anyone may take (${anyones}): a copy of this runtime's finalize, mined first, would take it and leave the relayer the gas, so it counts as 0`;
    throw new ProblemError("fee_too_low", `reservation ${id} ${what}, below this runtime's ${minimum}; its owner can finalize it now with Pool.finalize${fee === 0n ? "" : ", and is paid the fee"}`, {
      extensions: { fee: "0", minimumFee: minimum.toString() },
    });
  }
  const windowOpen = ours && reservation.blockTimestamp + FINALIZE_WINDOW_MARGIN_SECONDS <= until;
  if (windowOpen && (fee >= minimum || (await promisedHere(context, id as Hex, reservation, operations)))) return;
  if (!ours && fee >= minimum) return; // another finalizer's: the simulation answers FinalizerOnly, naming it
  const reason = !ours
    ? `pays a finalize fee of ${fee}, below this runtime's ${minimum} for its route in ${reservation.outputAsset}, and only its finalizer ${reservation.finalizer} may finalize it until ${isoTime(until)}`
    : windowOpen
      ? `names this relayer its finalizer with a finalize fee of ${fee}, below this runtime's ${minimum} for its route in ${reservation.outputAsset}, and this runtime neither relayed its action nor quoted its terms (a fee it did not quote is priced by its schedule); only this relayer may finalize it until ${isoTime(until)}`
      : `pays a finalize fee, but its finalizer, this relayer, may finalize it only until ${isoTime(until)}, too soon for a finalize sent now to be surely mined by then (a copy mined after it could take the fee)`;
  throw new ProblemError("fee_too_low", `reservation ${id} ${reason} (deadline + the Pool's FINALIZE_GRACE; Pool.finalize reverts FinalizerOnly for anyone else, its owner included): its owner can finalize it with Pool.finalize from ${isoTime(until + 1n)} (finalizableByOwnerAt), and is then paid the fee`, {
    extensions: { fee: fee.toString(), minimumFee: minimum.toString(), finalizer: reservation.finalizer, finalizableByOwnerAt: (until + 1n).toString() },
  });
}

/**
 * The fee of the action that made the reservation, when this runtime relayed it. The store knows the
 * actions it relayed: found by the output precommitment the Pool keeps (an index), matched by the
 * reservation id (domain and nullifiers), and its transaction checked to be mined and successful on the
 * node's chain now (an `included` one may have left it in a reorg). No log scan: a range-limited
 * provider refuses one from the deployment block.
 */
async function relayedActionFee({ chain }: CheckContext, reservationId: Hex, reservation: Reservation, operations: ActionRecords): Promise<bigint | undefined> {
  for (const op of operations.minedActions(reservation.precommitment.toString())) {
    if ("reservationId" in op.request || !op.request.action || op.minedHash === null) continue;
    if (reservationIdOf(op.request).toLowerCase() !== reservationId.toLowerCase()) continue;
    const receipt = await chain.getTransactionReceipt({ hash: op.minedHash }).catch((error: unknown) => {
      if (error instanceof TransactionReceiptNotFoundError) return null;
      throw error;
    });
    return receipt?.status === "success" ? BigInt(op.request.extData.fee) : undefined;
  }
  return undefined;
}

/**
 * Whether the fee a reservation carries was this runtime's own promise: it relayed the action (its store
 * holds it, mined), or it signed a quote of exactly its terms (a client may self-relay a quoted action).
 * Both come from the store, so they hold after a restart; a quote is found while the store keeps it.
 */
async function promisedHere(context: CheckContext, reservationId: Hex, reservation: Reservation, operations: ActionRecords): Promise<boolean> {
  const quoted = operations.quotesWithTerms(reservation.deadline.toString(), reservation.amountIn.toString()).some((stored) => {
    const parsed = Quote.safeParse(stored);
    if (!parsed.success) return false;
    const quote = parsed.data;
    const terms: Array<[string, string]> = [
      [quote.route, reservation.routeId],
      [quote.assetIn, reservation.inputAsset],
      [quote.assetOut, reservation.outputAsset],
      [quote.minOutput, reservation.minOutput.toString()],
      [quote.fees.finalize, reservation.finalizeFee.toString()],
      [quote.relayer, reservation.finalizer],
      [quote.typedData.domain.verifyingContract, context.config.poolAddress],
    ];
    return terms.every(([a, b]) => same(a, b));
  });
  return quoted || (await relayedActionFee(context, reservationId, reservation, operations)) !== undefined;
}
