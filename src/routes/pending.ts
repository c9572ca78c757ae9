import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { Problem, ProblemError } from "../problem.ts";
import { QUEUE_PATHS } from "../paths.ts";

/**
 * Routes of the spec whose behaviour has not landed yet. They exist so a client gets a clear 501
 * problem naming what is missing, rather than a 404 that looks like a wrong base URL.
 */
const PENDING = [
  { method: "POST", url: QUEUE_PATHS.finalize, what: "finalizing reserved action outputs" },
] as const;

export const pendingRoutes: FastifyPluginAsyncZod = async (app) => {
  for (const { method, url, what } of PENDING) {
    app.route({
      method,
      url,
      schema: {
        summary: `Not implemented yet: ${what}`,
        description: "This deployment offers no approved external actions yet; the route answers 501 not_implemented so a client sees a clear error rather than a 404.",
        response: { 501: Problem },
      },
      handler: async () => {
        throw new ProblemError("not_implemented", `${what} is not implemented by this runtime yet`);
      },
    });
  }
};
