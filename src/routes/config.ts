import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { RuntimeContext } from "../context.ts";
import { DeploymentConfig } from "../config/deployment-config.ts";
import { Problem } from "../problem.ts";
import { QUEUE_PATHS } from "../paths.ts";

/** GET /api/queue/config (spec §4.1): the manifest's bytes, verbatim. */
export const configRoutes: FastifyPluginAsyncZod<{ context: RuntimeContext }> = async (app, { context }) => {
  app.get(QUEUE_PATHS.config, {
    schema: {
      summary: "Deployment configuration",
      description: "The deployment configuration (spec §2.1). Byte-for-byte the runtime's manifest file. Check it against your reviewed deployment data (spec §1 rule 6).",
      response: { 200: DeploymentConfig, default: Problem },
    },
    handler: async (request, reply) => {
      // no-cache, not immutable: the same base URL may serve a new deployment after a restart (rule 7).
      reply.header("cache-control", "no-cache").header("etag", context.configEtag);
      if (request.headers["if-none-match"] === context.configEtag) return reply.code(304).send(undefined as never);
      // A Buffer bypasses the serializer: re-serializing could reorder or reformat, and the bytes are the contract.
      return reply.type("application/json; charset=utf-8").send(context.configBytes as never);
    },
  });
};
