import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { RuntimeContext } from "../context.ts";
import { Problem, ProblemError } from "../problem.ts";
import { QUEUE_PATHS } from "../paths.ts";
import { Operation, type OperationKind } from "../schemas/operation.ts";
import { IdempotencyKey, RelayRequest } from "../schemas/request.ts";
import { operationView } from "../relay/view.ts";
import { clientKey } from "../client-address.ts";

const ROUTES: Array<{ kind: Exclude<OperationKind, "finalize">; url: string; status: string; what: string }> = [
  { kind: "send", url: QUEUE_PATHS.sendRelay, status: QUEUE_PATHS.sendStatus, what: "a prepared private send (extAmount 0)" },
  { kind: "withdraw", url: QUEUE_PATHS.withdrawRelay, status: QUEUE_PATHS.withdrawStatus, what: "a prepared withdrawal (extAmount < 0)" },
];

/** POST /api/queue/send-relay and /withdraw-relay. */
export const relayRoutes: FastifyPluginAsyncZod<{ context: RuntimeContext }> = async (app, { context }) => {
  for (const { kind, url, status, what } of ROUTES) {
    app.post(url, {
      schema: {
        summary: `Submit ${what}`,
        description:
          "Takes the proof and public execution fields only (spec §1 rule 4), checks them (deployment, asset, binding, fee, proof, root, nullifiers, simulation, relayer funds, capacity) and queues the transaction. Answers 202 with the operation and a Location to its status. The checks that read the chain answer within the runtime's chain timeout, or the request is a 503 chain_unavailable with Retry-After. In flight, the queue holds a limited number of operations (503 queue_full), and each client (by IP) a share of it (429 too_many_in_flight), both with Retry-After. An external action uses its quote: a second action citing it is 409 quote_used. Send an Idempotency-Key header to make retries safe: a keyed request identical to a stored operation that has not failed answers that operation. A dev stack keeps a submission refused by a check of the chain (simulation, proof, root, reservation) as a `rejected` operation, named by the problem's `operationId`, whose status route answers it; it holds no nullifier or key, and an operator's runtime keeps none.",
        body: RelayRequest,
        headers: z.looseObject({ "idempotency-key": IdempotencyKey }),
        response: { 202: Operation, default: Problem },
      },
      handler: async (request, reply) => {
        const relayer = context.relayer;
        if (!relayer) throw new ProblemError("not_implemented", "this runtime has no relayer key: it relays nothing");
        // request → validate (schemas above) → decide → store → response; the engine does the chain.
        // The client as the rate limit knows it: its share of the in-flight limit.
        const op = await relayer.submit(kind, request.body, request.headers["idempotency-key"], clientKey(request.ip));
        // This line ties the request's id to the operation's: engine lines carry the operation id.
        request.log.info({ operation: op.id, state: op.state }, "operation accepted");
        return reply
          .code(202)
          .header("location", `${status}?id=${op.id}`)
          .header("retry-after", "1")
          .send(operationView(op, relayer.head.current(), relayer.settings.requiredConfirmations, relayer.reservations));
      },
    });
  }
};
