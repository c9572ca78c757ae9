import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { Problem, ProblemError } from "../../src/problem.ts";
import { DEV_PREFIX, describeDev, type DevDeps } from "./dev-route-kit.ts";

/** An operation's call trace, named and decoded (stack.trace, queue-devstack trace). */
export const traceRoutes: FastifyPluginAsyncZod<DevDeps> = async (app, deps) => {
  app.get(`${DEV_PREFIX}/trace`, {
    schema: {
      ...describeDev(
        "an operation's call trace",
        "The call tree of an operation's mined transaction (`debug_traceTransaction`), or, for one never mined (a refusal the stack kept, say), the relayer's call of it on the block it failed at: every contract named from the manifest, every function from the fixtures' ABIs, each revert's custom error decoded (`error`: `\"InvalidProof()\"`). `queue-devstack trace <id>` prints `text`.",
      ),
      querystring: z.strictObject({ id: z.string().min(1).max(100) }),
      response: {
        200: z.strictObject({
          transactionHash: z.string().nullable().meta({ description: "the transaction traced, or null for a call replayed" }),
          block: z.int().nullable().meta({ description: "the block whose state a call replayed was run on (the one it failed at); null for a transaction" }),
          error: z.string().nullable().meta({ description: "the outermost decoded error, if it reverted" }),
          text: z.string().meta({ description: "the tree as indented lines" }),
          root: z.unknown().meta({ description: "the call tree: { type, from, to, contract, function, gasUsed, error, calls: [ …the same… ] }" }),
        }),
        default: Problem,
      },
    },
    handler: async (request) => {
      // A trace is chain reads only: a failure is the node's (gone, or without debug_trace*), never a 500.
      const trace = await deps.trace(request.query.id).catch((error: unknown) => {
        throw new ProblemError("chain_unavailable", `the node could not trace operation ${request.query.id}: ${((error as { shortMessage?: string }).shortMessage ?? (error as Error).message).split("\n")[0]}`, { headers: { "retry-after": "2" } });
      });
      if (!trace) throw new ProblemError("operation_not_found", `no operation ${request.query.id}`);
      return trace;
    },
  });
};
