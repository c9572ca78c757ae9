import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { RuntimeContext } from "../context.ts";
import { NetworkList } from "../config/networks.ts";
import { Problem } from "../problem.ts";
import { QUEUE_PATHS } from "../paths.ts";

/** GET /api/queue/networks (spec §4.2). */
export const networksRoutes: FastifyPluginAsyncZod<{ context: RuntimeContext }> = async (app, { context }) => {
  app.get(QUEUE_PATHS.networks, {
    schema: {
      summary: "Supported chains",
      description: "Supported chains and wallet connection parameters (spec §2.2). Only Sepolia (11155111).",
      response: { 200: NetworkList, default: Problem },
    },
    handler: async () => context.networks,
  });
};
