import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { Problem } from "../../src/problem.ts";
import { chainUnavailable } from "../../src/admission/refusals.ts";
import { DEV_PREFIX, describeDev, type DevDeps } from "./dev-route-kit.ts";

/** The served configuration changing mid-flight (spec rules 7 and 8), and back. */
export const configRoutes: FastifyPluginAsyncZod<DevDeps> = async (app, deps) => {
  const Served = z.strictObject({ serving: z.enum(["original", "alternate"]), poolAddress: z.string() });
  app.post(`${DEV_PREFIX}/config`, {
    schema: {
      ...describeDev(
        "change the served configuration",
        "`alternate`: the queue URL serves another deployment (a second copy of the fixtures: a new Pool, tokens and relayer, deployed on first use), as after an operator's redeploy. GET /config answers the new configuration (a new ETag); a request for the old deployment is a 422 deployment_mismatch; an operation the old deployment accepted is still relayed by it, and its status still answered. `original`: back. A snapshot revert or a reset goes back to the original too.",
      ),
      body: z.strictObject({ serve: z.enum(["original", "alternate"]) }),
      response: { 200: Served, default: Problem },
    },
    handler: async (request) =>
      deps.lock.run(async () =>
        // The alternate's runtime checks its deployment through the runtime's RPC (a dev RPC fault on, say): 503, try again.
        deps.deployments.serve(request.body.serve).catch((error: unknown) => {
          throw chainUnavailable(error);
        }),
      ),
  });
};
