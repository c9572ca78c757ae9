import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { RuntimeContext } from "../context.ts";
import { Problem, ProblemError } from "../problem.ts";
import { QUEUE_PATHS } from "../paths.ts";
import { Operation, StatusQuery, type OperationKind } from "../relay/operation.ts";
import { operationView } from "../relay/view.ts";

/** withdraw-status also answers finalizes: both end in a note or tokens leaving the Pool's reservation. */
const ROUTES: Array<{ kind: OperationKind; url: string; serves: readonly OperationKind[] }> = [
  { kind: "send", url: QUEUE_PATHS.sendStatus, serves: ["send"] },
  { kind: "withdraw", url: QUEUE_PATHS.withdrawStatus, serves: ["withdraw", "finalize"] },
];

/** GET /api/queue/send-status?id= and /withdraw-status?id=: poll an operation (spec §6). */
export const statusRoutes: FastifyPluginAsyncZod<{ context: RuntimeContext }> = async (app, { context }) => {
  for (const { kind, url, serves } of ROUTES) {
    app.get(url, {
      schema: {
        summary: `State of a ${kind === "send" ? "private send" : "withdrawal, external action or finalize"}`,
        description:
          "The operation by its id (not by transaction hash: a fee bump changes the hash). Non-terminal answers carry Retry-After. Poll until `terminal` is true. Answered from the operation store at once, never waiting on the chain: `confirmations` is counted from `observedHead`, the last head the runtime saw, whose age says how fresh it is.",
        querystring: StatusQuery,
        response: { 200: Operation, default: Problem },
      },
      handler: async (request, reply) => {
        const relayer = context.relayer;
        if (!relayer) throw new ProblemError("not_implemented", "this runtime has no relayer key: it relays nothing");
        const op = relayer.store.get(request.query.id);
        if (!op || !serves.includes(op.kind)) throw new ProblemError("operation_not_found", `no ${serves.join(" or ")} operation with id ${request.query.id}`);
        const view = operationView(op, relayer.head.current(), relayer.settings.requiredConfirmations, relayer.reservations);
        if (!view.terminal) reply.header("retry-after", "1");
        return view;
      },
    });
  }
};
