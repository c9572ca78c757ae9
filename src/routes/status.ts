import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { RuntimeContext } from "../context.ts";
import { Problem, ProblemError } from "../problem.ts";
import { QUEUE_PATHS } from "../paths.ts";
import { Operation, StatusQuery, type OperationKind } from "../schemas/operation.ts";
import { StatusAnswers } from "../relay/status-answer.ts";
import { validatorCompiler } from "../validation.ts";

/** withdraw-status also answers finalizes: both end in a note or tokens leaving the Pool's reservation. */
const ROUTES: Array<{ kind: OperationKind; url: string; serves: readonly OperationKind[] }> = [
  { kind: "send", url: QUEUE_PATHS.sendStatus, serves: ["send"] },
  { kind: "withdraw", url: QUEUE_PATHS.withdrawStatus, serves: ["withdraw", "finalize"] },
];

/** Query validations kept, at most: a poll asks for the same few ids again and again. */
const KEPT_QUERIES = 4_096;

/**
 * The route's validator, StatusQuery's verdict kept per id: zod's parse of the same `{ id }` was a
 * twentieth of a poll's time. Only a query of exactly one field, `id`, is looked up; StatusQuery has no
 * transform and no check that changes with time, so the same id always gets the same verdict. Only an
 * accepted id is kept: those are short, where a refused one may be any 16 KB a client sends. Exported
 * for its test.
 */
export const keptPerId = (route: Parameters<typeof validatorCompiler>[0]) => {
  // Ours answers at once, never a promise or a boolean.
  const validate = validatorCompiler(route) as (data: unknown) => { value?: unknown; error?: unknown };
  if (route.httpPart !== "querystring") return validate;
  const kept = new Map<string, ReturnType<typeof validate>>();
  return (data: unknown) => {
    const query = data as Record<string, unknown>;
    let fields = 0;
    for (const _ in query) fields++;
    const id = query.id;
    if (fields !== 1 || typeof id !== "string") return validate(data);
    let verdict = kept.get(id);
    if (verdict === undefined) {
      if (kept.size >= KEPT_QUERIES) kept.clear();
      verdict = validate(data);
      if (verdict.value === undefined) return verdict;
      Object.freeze(verdict.value);
      kept.set(id, verdict);
    }
    return verdict;
  };
};

/** GET /api/queue/send-status?id= and /withdraw-status?id=: poll an operation (spec §6). */
export const statusRoutes: FastifyPluginAsyncZod<{ context: RuntimeContext }> = async (app, { context }) => {
  const relayer = context.relayer;
  const answers = relayer && new StatusAnswers({ head: relayer.head, reservations: relayer.reservations, requiredConfirmations: relayer.settings.requiredConfirmations });
  for (const { kind, url, serves } of ROUTES) {
    app.get(url, {
      schema: {
        summary: `State of a ${kind === "send" ? "private send" : "withdrawal, external action or finalize"}`,
        description:
          "The operation by its id (not by transaction hash: a fee bump changes the hash). Non-terminal answers carry Retry-After. Poll until `terminal` is true. Answered from the operation store at once, never waiting on the chain: `confirmations` is counted from `observedHead`, the last head the runtime saw, whose age says how fresh it is. In a dev stack, the id a refusal named (`operationId` of a 422 or 409 the chain checks gave) answers the `rejected` operation kept of it: `reason` is the refusal.",
        querystring: StatusQuery,
        response: { 200: Operation, default: Problem },
      },
      validatorCompiler: keptPerId as never,
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
