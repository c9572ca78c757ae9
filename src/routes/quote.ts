import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { Quote, QuoteRequest } from "../schemas/quote.ts";
import type { RuntimeContext } from "../context.ts";
import { Problem, ProblemError } from "../problem.ts";
import { QUEUE_PATHS } from "../paths.ts";
import { clientKey } from "../client-address.ts";

/** POST /api/queue/quote: a signed quote of an approved external action. */
export const quoteRoutes: FastifyPluginAsyncZod<{ context: RuntimeContext }> = async (app, { context }) => {
  app.post(QUEUE_PATHS.quote, {
    schema: {
      summary: "Quote an approved external action",
      description:
        "Prices `amountIn` of `assetIn` through an approved route (config `routes`, action `external`) at the route's current price, and answers the terms an action must carry: a quote id, the expected and least output, the action's and the finalize's fees (config `relayFees.actions`), the action's deadline, the quote's expiry, and the relayer's EIP-712 signature with the typed data it signed (domain: name `queue-devstack quote`, version 1, chain id, the Pool as verifyingContract; the message binds the config's proof domain and every term). Verify it with any EIP-712 tool. The signature is a receipt for the client: nothing on chain checks it (the Pool is named only to scope it to this deployment); the chain enforces the action's terms, which the proof binds. 422 deployment_mismatch, route_not_approved, unsupported_asset, amount_too_small, or quote_refused when the route's adapter reverts for this request (an amount its price overflows: the answer names the revert); 503 price_unavailable (with Retry-After) when the route has no price for the pair yet; 429 too_many_quotes (with Retry-After) when this client already holds the limit of unexpired quotes. A quote admits one action: a second gets 409 quote_used. Quotes are deleted some time after they expire.",
      body: QuoteRequest,
      response: { 200: Quote, default: Problem },
    },
    handler: async (request) => {
      if (!context.quoter) throw new ProblemError("not_implemented", "this runtime has no relayer key: it quotes nothing");
      // The client as the rate limit knows it (the socket's address, or the proxy's if trustProxy says so).
      return context.quoter.quote(request.body, clientKey(request.ip));
    },
  });
};
