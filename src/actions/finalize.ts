import { TransactionReceiptNotFoundError, zeroAddress, type Address, type Hex } from "viem";
import { actionReadAbi } from "../chain/abi.ts";
import type { DeploymentConfig } from "../config/deployment-config.ts";
import { ProblemError } from "../problem.ts";
import type { CheckContext } from "../relay/checks.ts";
import type { FinalizeRequest } from "../relay/request.ts";
import type { OperationStore } from "../relay/store.ts";
import { reservationIdOf } from "../relay/view.ts";
import { externalRoute, feeEntry } from "./quoter.ts";
import { readReservation } from "./reservation-tracker.ts";

/** What keeps two live finalizes of one reservation apart: it is claimed like a nullifier. */
export const reservationClaim = (reservationId: string) => `reservation:${reservationId}`;

export type Reservation = Awaited<ReturnType<typeof readReservation>>;
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
type MinedActions = Pick<OperationStore, "minedActions">;

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

/**
 * When the owner's own Pool.finalize of a settled reservation can succeed, in unix seconds: null for now.
 * A fee above 0 is its finalizer's alone until deadline + FINALIZE_GRACE (FinalizerOnly, the owner's call
 * included); then anyone's, the fee to the caller. The grace is read from the Pool, which enforces it.
 */
async function ownerMayFinalizeAt({ chain, config }: CheckContext, reservation: Reservation, fee: bigint): Promise<bigint | null> {
  if (fee === 0n || reservation.finalizer === zeroAddress) return null;
  const grace = await chain.readContract({ address: config.poolAddress as Address, abi: actionReadAbi, functionName: "FINALIZE_GRACE" });
  const until = reservation.deadline + grace;
  return reservation.blockTimestamp > until ? null : until + 1n;
}

const isoTime = (unixSeconds: bigint) => new Date(Number(unixSeconds) * 1000).toISOString();

/**
 * A finalize costs the relayer a transaction: it is relayed only when paid for (as a relay is: a proof of
 * nothing must not make the relayer pay gas for free). A settled reservation pays its finalizeFee (at most
 * its output), which must cover this runtime's finalize fee for its route and output asset; one below it
 * is refused even when this relayer is its finalizer, who alone may finalize it until deadline +
 * FINALIZE_GRACE: the answer says when the owner may (finalizableByOwnerAt). A refund pays nothing: it is
 * relayed only for an action this runtime relayed itself, whose fee covered a finalize in the input asset;
 * its owner may finalize it at once. Otherwise 422 fee_too_low, naming the fee and the minimum.
 */
export async function checkFinalizeFee(context: CheckContext, request: FinalizeRequest, reservation: Reservation, operations: MinedActions): Promise<void> {
  const id = request.reservationId;
  if (reservation.state === "settled") {
    const minimum = configuredFinalizeFee(context.config, reservation.routeId, reservation.outputAsset);
    const fee = reservation.finalizeFee < reservation.amountOut ? reservation.finalizeFee : reservation.amountOut;
    if (fee < minimum) {
      const at = await ownerMayFinalizeAt(context, reservation, fee);
      const owner =
        at === null
          ? "its owner can finalize it now with Pool.finalize"
          : `only its finalizer ${reservation.finalizer}${same(reservation.finalizer, context.relayer) ? " (this relayer)" : ""} may finalize it until ${isoTime(at - 1n)} (deadline + the Pool's FINALIZE_GRACE; Pool.finalize reverts FinalizerOnly for anyone else, its owner included): its owner can finalize it with Pool.finalize from ${isoTime(at)} (finalizableByOwnerAt), and is then paid the fee`;
      throw new ProblemError("fee_too_low", `reservation ${id} pays a finalize fee of ${fee}, below this runtime's ${minimum} for its route in ${reservation.outputAsset}: ${owner}`, {
        extensions: { fee: fee.toString(), minimumFee: minimum.toString(), ...(at === null ? {} : { finalizer: reservation.finalizer, finalizableByOwnerAt: at.toString() }) },
      });
    }
    return;
  }
  const minimum = configuredFinalizeFee(context.config, reservation.routeId, reservation.inputAsset);
  const paid = await relayedActionFee(context, id as Hex, reservation, operations);
  if (paid === undefined || paid < minimum) {
    const why = paid === undefined ? "an action this runtime did not relay" : `its action paid a fee of ${paid}`;
    throw new ProblemError("fee_too_low", `reservation ${id} is a refund, which pays no fee, of ${why}: this runtime finalizes a refund only when its action's fee covered a finalize (${minimum} in ${reservation.inputAsset}); its owner can finalize it now with Pool.finalize (a refund pays no fee: anyone may, at any time)`, {
      extensions: { fee: (paid ?? 0n).toString(), minimumFee: minimum.toString() },
    });
  }
}

/**
 * The fee of the action that made the reservation, when this runtime relayed it. The store knows the
 * actions it relayed: found by the output precommitment the Pool keeps (an index), matched by the
 * reservation id (domain and nullifiers), and its transaction checked to be mined and successful on the
 * node's chain now (an `included` one may have left it in a reorg). No log scan: a range-limited
 * provider refuses one from the deployment block.
 */
async function relayedActionFee({ chain }: CheckContext, reservationId: Hex, reservation: Reservation, operations: MinedActions): Promise<bigint | undefined> {
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
