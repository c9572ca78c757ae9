import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { RuntimeContext } from "../context.ts";
import { Problem, ProblemError } from "../problem.ts";
import { QUEUE_PATHS } from "../paths.ts";
import { Operation, StatusQuery, type OperationKind } from "../relay/operation.ts";
import { operationView } from "../relay/view.ts";

const ROUTES: Array<{ kind: OperationKind; url: string }> = [
  { kind: "send", url: QUEUE_PATHS.sendStatus },
  { kind: "withdraw", url: QUEUE_PATHS.withdrawStatus },
];

/** GET /api/queue/send-status?id= and /withdraw-status?id=: poll an operation (spec §6). */
export const statusRoutes: FastifyPluginAsyncZod<{ context: RuntimeContext }> = async (app, { context }) => {
  for (const { kind, url } of ROUTES) {
    app.get(url, {
      schema: {
        summary: `State of a ${kind === "send" ? "private send" : "withdrawal"}`,
        description:
          "The operation by its id (not by transaction hash: a fee bump changes the hash). Non-terminal answers carry Retry-After. Poll until `terminal` is true. Answered from the operation store at once, never waiting on the chain: `confirmations` is counted from `observedHead`, the last head the runtime saw, whose age says how fresh it is.",
        querystring: StatusQuery,
        response: { 200: Operation, default: Problem },
      },
      handler: async (request, reply) => {
        const relayer = context.relayer;
        if (!relayer) throw new ProblemError("not_implemented", "this runtime has no relayer key: it relays nothing");
        const op = relayer.store.get(request.query.id);
        if (!op || op.kind !== kind) throw new ProblemError("operation_not_found", `no ${kind} operation with id ${request.query.id}`);
        const view = operationView(op, relayer.head.current(), relayer.settings.requiredConfirmations);
        if (!view.terminal) reply.header("retry-after", "1");
        return view;
      },
    });
  }
};
