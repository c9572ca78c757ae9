import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { RuntimeContext } from "../context.ts";
import { Problem, ProblemError } from "../problem.ts";
import { QUEUE_PATHS } from "../paths.ts";
import { Operation, StatusQuery, type OperationKind } from "../relay/operation.ts";
import { StatusAnswers } from "../relay/status-answer.ts";

/** withdraw-status also answers finalizes: both end in a note or tokens leaving the Pool's reservation. */
const ROUTES: Array<{ kind: OperationKind; url: string; serves: readonly OperationKind[] }> = [
  { kind: "send", url: QUEUE_PATHS.sendStatus, serves: ["send"] },
  { kind: "withdraw", url: QUEUE_PATHS.withdrawStatus, serves: ["withdraw", "finalize"] },
];

/** GET /api/queue/send-status?id= and /withdraw-status?id=: poll an operation (spec §6). */
export const statusRoutes: FastifyPluginAsyncZod<{ context: RuntimeContext }> = async (app, { context }) => {
  const relayer = context.relayer;
  const answers = relayer && new StatusAnswers({ head: relayer.head, reservations: relayer.reservations, requiredConfirmations: relayer.settings.requiredConfirmations });
  for (const { kind, url, serves } of ROUTES) {
    app.get(url, {
      schema: {
        summary: `State of a ${kind === "send" ? "private send" : "withdrawal, external action or finalize"}`,
        description:
          "The operation by its id (not by transaction hash: a fee bump changes the hash). Non-terminal answers carry Retry-After. Poll until `terminal` is true. Answered from the operation store at once, never waiting on the chain: `confirmations` is counted from `observedHead`, the last head the runtime saw, whose age says how fresh it is.",
        querystring: StatusQuery,
        response: { 200: Operation, default: Problem },
      },
      // Not async: a promise per poll is measurable on a route this small.
      handler: (request, reply) => {
        if (!relayer || !answers) throw new ProblemError("not_implemented", "this runtime has no relayer key: it relays nothing");
        const op = relayer.store.peek(request.query.id);
        if (!op || !serves.includes(op.kind)) throw new ProblemError("operation_not_found", `no ${serves.join(" or ")} operation with id ${request.query.id}`);
        const { json, terminal } = answers.answer(op);
        if (!terminal) reply.header("retry-after", "1");
        // Serialized and checked against Operation already (StatusAnswers).
        reply.type("application/json; charset=utf-8").send(json as never);
      },
    });
  }
};
