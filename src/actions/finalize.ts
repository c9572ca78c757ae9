import type { Address, Hex } from "viem";
import { ProblemError } from "../problem.ts";
import type { CheckContext } from "../relay/checks.ts";
import type { FinalizeRequest } from "../relay/request.ts";
import { readReservation } from "./reservation-tracker.ts";

/** What keeps two live finalizes of one reservation apart: it is claimed like a nullifier. */
export const reservationClaim = (reservationId: string) => `reservation:${reservationId}`;

/**
 * The reservation, as the Pool has it now: unknown (404), already finalized (409), or pending with its
 * deadline not passed (409: the fill may still come). A settled, failed, or expired pending one can be
 * finalized; the last is refunded.
 */
export async function checkReservation({ chain, config }: CheckContext, request: FinalizeRequest): Promise<void> {
  const id = request.reservationId as Hex;
  const { state, deadline, blockTimestamp } = await readReservation(chain, config.poolAddress as Address, id);
  if (state === "none") throw new ProblemError("reservation_not_found", `the Pool has no reservation ${id}`);
  if (state === "finalized") throw new ProblemError("already_finalized", `reservation ${id} is already finalized`);
  if (state === "pending") {
    throw new ProblemError("reservation_not_settled", `reservation ${id} is not settled yet: its route may still fill it until ${new Date(Number(deadline) * 1000).toISOString()}, and after that it is refunded`, {
      extensions: { deadline: deadline.toString() },
      headers: { "retry-after": String(Math.max(1, Math.min(60, Number(deadline - blockTimestamp)))) },
    });
  }
}
