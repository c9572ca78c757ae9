import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { RuntimeContext } from "../context.ts";
import { Problem, ProblemError } from "../problem.ts";
import { QUEUE_PATHS } from "../paths.ts";
import { noneMatch } from "../if-none-match.ts";

/** GET /api/queue/artifacts/:name — the proof files the config lists, checked at start. */
export const artifactsRoutes: FastifyPluginAsyncZod<{ context: RuntimeContext }> = async (app, { context }) => {
  app.get(`${QUEUE_PATHS.artifacts}/:name`, {
    schema: {
      summary: "A proof file",
      description:
        "Serves a proof file listed in the config's queue.proof.artifacts. Content-addressed by the config (sha256), so it is cached as immutable; clients must still check the sha256 before use.",
      params: z.strictObject({ name: z.string() }),
      response: { 200: z.any().meta({ description: "the file" }), default: Problem },
    },
    handler: async (request, reply) => {
      const artifact = context.artifacts.get(request.params.name);
      if (!artifact) {
        throw new ProblemError("artifact_not_found", `no proof artifact named ${request.params.name}; see queue.proof.artifacts in the config`);
      }
      const cached = noneMatch(request.headers["if-none-match"], artifact.etag);
      const body = cached ? undefined : await artifact.open();
      if (!cached && !body) {
        throw new ProblemError("artifact_not_found", `the proof file ${request.params.name} was written to since the runtime checked it at start and no longer has the config's sha256: restart the runtime`);
      }
      reply
        .header("etag", artifact.etag)
        .header("cache-control", "public, max-age=31536000, immutable")
        .type(artifact.contentType);
      if (cached) return reply.code(304).send(undefined as never);
      return reply.header("content-length", artifact.size).send(body as never);
    },
  });
};
