import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { Problem, ProblemError } from "../../src/problem.ts";
import { JsonRpcError } from "../chain/index.ts";
import { SnapshotError } from "../snapshot/index.ts";
import { DEV_PREFIX, describeDev, type DevDeps } from "./dev-route-kit.ts";
import { devProblem } from "./problems/index.ts";

/** The whole stack back to its clean state, as stack.reset() does. */
export const resetRoutes: FastifyPluginAsyncZod<DevDeps> = async (app, deps) => {
  app.post(`${DEV_PREFIX}/reset`, {
    schema: {
      ...describeDev("reset the stack", "Back to the clean state the stack started in, as `stack.reset()`: the chain and the operation store reverted together, the faults off, the original deployment served."),
      // No body, or {}: nothing else (an unknown field is refused, as by every control).
      body: z.strictObject({}).nullish(),
      response: { 200: z.strictObject({ reset: z.literal(true) }), default: Problem },
    },
    // The reset takes the dev controls' lock itself (as stack.reset() does).
    handler: async () => {
      const reset = deps.reset();
      if (!reset) throw new ProblemError("not_implemented", "this stack is still starting: no clean state to go back to yet");
      try {
        await reset();
      } catch (error) {
        if (error instanceof ProblemError) throw error;
        // Why, in words: the chain's refusal, or a revert that did not take (the stack stays resettable unless this says its snapshot is lost).
        const why = error instanceof SnapshotError || error instanceof JsonRpcError ? error.message : `${(error as Error).name}: ${(error as Error).message}`;
        throw devProblem("reset_failed", `the reset did not complete: ${why}`, { headers: { "retry-after": "1" } });
      }
      return { reset: true as const };
    },
  });
};
