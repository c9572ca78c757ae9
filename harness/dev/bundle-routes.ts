import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { Problem, ProblemError } from "../../src/problem.ts";
import { DEV_PREFIX, describeDev, type DevDeps } from "./dev-route-kit.ts";

/** The stack's repro bundle, taken now (stack.save's bytes; queue-devstack save). */
export const bundleRoutes: FastifyPluginAsyncZod<DevDeps> = async (app, deps) => {
  app.get(`${DEV_PREFIX}/bundle`, {
    schema: {
      ...describeDev("a repro bundle of the stack", "The stack's repro bundle as it is now (`application/gzip`): chain, manifest and operations, no key or credential. `queue-devstack save <file>` writes it; `--load <file>` starts from it. A fork stack's bundle carries the forked state it touched and loads without the upstream."),
      response: { 200: z.any().meta({ description: "the bundle (application/gzip)" }), default: Problem },
    },
    handler: async (_request, reply) =>
      deps.lock.run(async () => {
        let bytes: Uint8Array;
        try {
          bytes = await deps.bundle();
        } catch (error) {
          throw new ProblemError("not_implemented", (error as Error).message);
        }
        return reply.type("application/gzip").send(bytes);
      }),
  });
};
