import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { Problem, ProblemError } from "../../src/problem.ts";
import type { Replayer } from "./replay.ts";
import { ReplayAnswer, ReplayLinks, ReplayOptions } from "./schemas.ts";

const ById = z.strictObject({ id: z.string().min(1).max(100) });

export interface ReplayRoutesOptions {
  /** The dev routes' prefix (/api/dev); not `prefix`, which Fastify would add to each route's path itself. */
  devPrefix: string;
  replayer: Replayer;
  /** The dev routes' own summary and description (development only, loopback only…). */
  describe: (summary: string, description: string) => object;
}

/**
 * POST {prefix}/operations/{id}/replay, and GET …/replays: registered in the dev routes' scope, so they
 * are loopback-only, Host-checked, cross-origin refused, and absent from an operator's runtime.
 */
export const replayRoutes: FastifyPluginAsyncZod<ReplayRoutesOptions> = async (app, { devPrefix: prefix, replayer, describe }) => {
  app.post(`${prefix}/operations/:id/replay`, {
    schema: {
      ...describe(
        "replay an operation",
        "Runs a stored operation's exact request through the relayer's admission checks and simulation again, on the chain as it is now (a patched contract, a changed storage slot) or at block `at`, and diffs its call trace against the original's. 200 whatever the verdict (`verdict.exitCode`: 0 as expected, 1 not, 125 cannot be judged); `send` relays it for real, as a new operation linked to the original. 404 operation_not_found, 409 operation_live, 422 not_replayable. See docs/replay.md.",
      ),
      params: ById,
      body: ReplayOptions.default({}),
      response: { 200: ReplayAnswer, default: Problem },
    },
    handler: async (request) => replayer.replay(request.params.id, request.body),
  });

  app.get(`${prefix}/operations/:id/replays`, {
    schema: {
      ...describe("an operation's replay links", "The operation a replay was sent for (`replayOf`), and the replays sent for this one (`replays`): kept by the dev stack while it runs, as the operation's own shape has no room for them."),
      params: ById,
      response: { 200: ReplayLinks, default: Problem },
    },
    handler: async (request) => {
      const links = replayer.links(request.params.id);
      if (!links) throw new ProblemError("operation_not_found", `no operation ${request.params.id}`);
      return links;
    },
  });
};
