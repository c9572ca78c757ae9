import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { FinalizeRequest } from "../schemas/request.ts";
import type { RuntimeContext } from "../context.ts";
import { Problem, ProblemError } from "../problem.ts";
import { QUEUE_PATHS } from "../paths.ts";
import { Operation } from "../schemas/operation.ts";
import { IdempotencyKey } from "../schemas/request.ts";
import { operationView } from "../relay/view.ts";
import { clientKey } from "../client-address.ts";

/** POST /api/queue/finalize: a reservation's output (or refund) becomes a note. */
export const finalizeRoutes: FastifyPluginAsyncZod<{ context: RuntimeContext }> = async (app, { context }) => {
  app.post(QUEUE_PATHS.finalize, {
    schema: {
      summary: "Finalize a reserved action output",
      description:
        "Relays Pool.finalize(reservationId): a settled action's output becomes a note for the precommitment the action named (less the quoted finalize fee, paid to the relayer); a failed action, or an async one not settled by its deadline, becomes a refund note of its input. Answers 202 with an operation in the same state machine as the relays, polled at withdraw-status. Relayed only when paid for: a settled reservation's finalize fee must cover this runtime's finalize fee for its route and output asset (config relayFees.actions), and a refund (no fee) must be of an action this runtime relayed whose fee covered a finalize in its input asset; else 422 fee_too_low naming the fee and the minimum (the owner can call Pool.finalize itself: at once for a fee of 0; for a fee above 0, only after its deadline plus the Pool's FINALIZE_GRACE, which the answer names as finalizer and finalizableByOwnerAt). A reservation whose fee is its finalizer's (another relayer's) until its deadline plus the Pool's FINALIZE_GRACE is 422 simulation_failed FinalizerOnly. 404 reservation_not_found; 409 reservation_not_settled (before the fill; Retry-After), already_finalized, or nullifier_in_flight when a finalize of it is under way. Idempotency-Key as on the relay routes. A dev stack keeps one refused by a check of the chain as a `rejected` operation, named by the problem's `operationId` (see send-relay).",
      body: FinalizeRequest,
      headers: z.looseObject({ "idempotency-key": IdempotencyKey }),
      response: { 202: Operation, default: Problem },
    },
    handler: async (request, reply) => {
      const relayer = context.relayer;
      if (!relayer) throw new ProblemError("not_implemented", "this runtime has no relayer key: it finalizes nothing");
      const op = await relayer.submitFinalize(request.body, request.headers["idempotency-key"], clientKey(request.ip));
      // This line ties the request's id to the operation's: engine lines carry the operation id.
      request.log.info({ operation: op.id, state: op.state }, "operation accepted");
      return reply
        .code(202)
        .header("location", `${QUEUE_PATHS.withdrawStatus}?id=${op.id}`)
        .header("retry-after", "1")
        .send(operationView(op, relayer.head.current(), relayer.settings.requiredConfirmations, relayer.reservations));
    },
  });
};
