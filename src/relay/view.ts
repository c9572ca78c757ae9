import { reservationIdOf } from "../chain/ext-data.ts";
import type { ObservedHead } from "../chain/head.ts";
import { TERMINAL_STATES, type Operation } from "../schemas/operation.ts";
import type { OperationRecord } from "../store/types.ts";
import type { ObservedReservation } from "../chain/reservation-tracker.ts";

/** Blocks on top of, and including, an operation's block, as the last head seen counts them (0 before either). */
export function confirmationsOf(block: number | null, head: ObservedHead | null): number {
  return block === null || head === null ? 0 : Math.max(0, Number(head.number) - block + 1);
}

/**
 * The public view of an operation: what status routes and submissions answer. Confirmations are
 * counted from the last head the runtime saw, never a fresh read: an answer must not wait on the chain.
 */
export function operationView(
  op: OperationRecord,
  head: ObservedHead | null,
  requiredConfirmations: number,
  reservations?: { current(id: string): ObservedReservation | null },
  now = Date.now(),
): Operation {
  const confirmations = confirmationsOf(op.block?.number ?? null, head);
  return {
    id: op.id,
    kind: op.kind,
    state: op.state,
    terminal: TERMINAL_STATES.has(op.state),
    reason: op.reason,
    deployment: op.request.deployment,
    nullifiers: op.nullifiers,
    transactions: op.attempts.map(({ raw: _raw, ...attempt }) => attempt),
    transactionHash: op.minedHash,
    block: op.block,
    confirmations,
    requiredConfirmations,
    observedHead: head === null ? null : { number: Number(head.number), observedAt: new Date(head.observedAt).toISOString(), ageMs: Math.max(0, now - head.observedAt) },
    createdAt: op.createdAt,
    updatedAt: op.updatedAt,
    history: op.history,
    ...("reservationId" in op.request
      ? { finalize: { reservationId: op.request.reservationId } }
      : op.request.action
        ? { action: actionView(op.request.action.quoteId, reservationIdOf(op.request), reservations) }
        : {}),
  };
}

function actionView(quoteId: string, reservationId: `0x${string}`, reservations?: { current(id: string): ObservedReservation | null }) {
  const seen = reservations?.current(reservationId) ?? null;
  return { quoteId, reservationId, reservation: seen === null ? null : { state: seen.state, observedAt: new Date(seen.observedAt).toISOString() } };
}
