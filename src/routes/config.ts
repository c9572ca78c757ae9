import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { RuntimeContext } from "../context.ts";
import { DeploymentConfig } from "../config/deployment-config.ts";
import { Problem } from "../problem.ts";
import { QUEUE_PATHS } from "../paths.ts";
import { noneMatch } from "../if-none-match.ts";

/** GET /api/queue/config (spec §4.1): the manifest's bytes, verbatim. */
export const configRoutes: FastifyPluginAsyncZod<{ context: RuntimeContext }> = async (app, { context }) => {
  // no-cache, not immutable: the same base URL may serve a new deployment after a restart (rule 7).
  // Made once per ETag: a code change (code-change.ts) gives the context new bytes and a new ETag.
  const headersOf = (etag: string) => {
    const validators = { "cache-control": "no-cache", etag };
    return { etag, validators, answer: { ...validators, "content-type": "application/json; charset=utf-8" } };
  };
  let headers = headersOf(context.configEtag);
  app.get(QUEUE_PATHS.config, {
    schema: {
      summary: "Deployment configuration",
      description: "The deployment configuration (spec §2.1). Byte-for-byte the runtime's manifest file. Check it against your reviewed deployment data (spec §1 rule 6).",
      response: { 200: DeploymentConfig, default: Problem },
    },
    // Not async: a promise per answer is measurable on a route this small; the headers are made once.
    handler: (request, reply) => {
      if (headers.etag !== context.configEtag) headers = headersOf(context.configEtag);
      if (noneMatch(request.headers["if-none-match"], headers.etag)) return void reply.code(304).headers(headers.validators).send(undefined as never);
      // A Buffer bypasses the serializer: re-serializing could reorder or reformat, and the bytes are the contract.
      reply.headers(headers.answer).send(context.configBytes as never);
    },
  });
};
