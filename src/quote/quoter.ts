import { randomBytes } from "node:crypto";
import { BaseError, ContractFunctionRevertedError, type LocalAccount, type PublicClient } from "viem";
import { adapterAbi } from "../chain/abi.ts";
import { withinDeadline } from "../chain/deadline.ts";
import type { DeploymentConfig, ExternalActionRoute } from "../config/deployment-config.ts";
import { ProblemError } from "../problem.ts";
import { externalRoute, feeEntry } from "../admission/action-routes.ts";
import { chainUnavailable } from "../admission/refusals.ts";
import { checkDeploymentRef } from "../admission/request-checks.ts";
import type { OperationStore } from "../store/types.ts";
import { QUOTE_EIP712_NAME, QUOTE_EIP712_VERSION, QUOTE_TYPES, typedDataForSigning, type Quote, type QuoteRequest } from "../schemas/quote.ts";

export interface QuoteSettings {
  /** How long a quote may be submitted: room for proving on a slow phone (20–40 s here). */
  validForSeconds: number;
  /** How long after the quote an action may settle before it is refunded. */
  settleWithinSeconds: number;
  /** minOutput = expectedOutput less this, in basis points. */
  slippageBps: number;
  /**
   * Unexpired quotes one client (the request's IP, as the rate limit counts it) may hold: each costs two
   * chain reads, a signature with the hot key and a stored row. Past it, 429 too_many_quotes.
   */
  maxLivePerClient: number;
  /** How long after its expiry a quote is kept (an action citing it hears quote_expired, not "unknown"); then deleted. */
  keepExpiredSeconds: number;
}

export const DEFAULT_QUOTE_SETTINGS: QuoteSettings = { validForSeconds: 120, settleWithinSeconds: 600, slippageBps: 50, maxLivePerClient: 32, keepExpiredSeconds: 600 };

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

function tooManyQuotes(live: number, nextExpiry: number, settings: QuoteSettings): ProblemError {
  // The soonest of them expires then, and frees a place.
  const wait = Math.min(settings.validForSeconds, Math.max(1, nextExpiry + 1 - Math.floor(Date.now() / 1000)));
  return new ProblemError("too_many_quotes", `this client holds ${live} unexpired quotes, the limit is ${settings.maxLivePerClient}: use one, or wait for one to expire`, {
    extensions: { limit: settings.maxLivePerClient },
    headers: { "retry-after": String(wait) },
  });
}

/**
 * Quotes approved external actions: request → validate (schema, by the route) → decide (deployment,
 * route, assets) → chain (the adapter's price) → sign (EIP-712, the relayer key) → store → response.
 */
export class Quoter {
  private readonly deps: { config: DeploymentConfig; chain: PublicClient; account: LocalAccount; store: OperationStore; settings: QuoteSettings; chainTimeoutMs: number };

  constructor(deps: Quoter["deps"]) {
    this.deps = deps;
  }

  /** `client`: who asks (the request's IP); the cap on live quotes is theirs. */
  async quote(request: QuoteRequest, client: string): Promise<Quote> {
    const { config, account, store, settings } = this.deps;
    checkDeploymentRef(config, request.deployment);
    // Before the chain reads and the signature it would cost; the insert decides.
    const live = store.liveQuotes(client, Math.floor(Date.now() / 1000));
    if (live.count >= settings.maxLivePerClient) throw tooManyQuotes(live.count, live.nextExpiry ?? 0, settings);
    const route = externalRoute(config, request.route);
    if (!route.inputAssets.some((a) => same(a, request.assetIn))) throw new ProblemError("unsupported_asset", `route ${route.name} takes no ${request.assetIn} (its inputAssets)`);
    if (!route.outputAssets.some((a) => same(a, request.assetOut))) throw new ProblemError("unsupported_asset", `route ${route.name} pays no ${request.assetOut} (its outputAssets)`);
    if (same(request.assetIn, request.assetOut)) throw new ProblemError("unsupported_asset", "assetIn and assetOut are the same asset");
    const actionFee = BigInt(feeEntry(config, route, request.assetIn).action);
    const finalizeFee = BigInt(feeEntry(config, route, request.assetOut).finalize);
    const amountIn = BigInt(request.amountIn);

    const [expectedOutput, chainTime] = await Promise.all([this.price(route, request, amountIn), this.chainTime()]);
    const minOutput = (expectedOutput * BigInt(10_000 - settings.slippageBps)) / 10_000n;
    if (minOutput <= finalizeFee) {
      throw new ProblemError("amount_too_small", `the least output ${minOutput} does not cover the finalize fee ${finalizeFee}: quote a larger amountIn`, {
        extensions: { minOutput: minOutput.toString(), finalizeFee: finalizeFee.toString() },
      });
    }
    const now = Math.floor(Date.now() / 1000);
    const idHex = randomBytes(32).toString("hex");
    const message = {
      configDomain: config.domain,
      quoteId: `0x${idHex}`,
      route: route.id,
      assetIn: request.assetIn,
      assetOut: request.assetOut,
      amountIn: amountIn.toString(),
      expectedOutput: expectedOutput.toString(),
      minOutput: minOutput.toString(),
      actionFee: actionFee.toString(),
      finalizeFee: finalizeFee.toString(),
      // The Pool checks the deadline against block time, which a dev chain may have moved ahead of ours.
      deadline: String(Math.max(now, chainTime) + settings.settleWithinSeconds),
      expiry: String(now + settings.validForSeconds),
      relayer: account.address,
    };
    const typedData = {
      domain: { name: QUOTE_EIP712_NAME, version: QUOTE_EIP712_VERSION, chainId: config.chainId, verifyingContract: config.poolAddress },
      types: { Quote: QUOTE_TYPES.Quote.map((field) => ({ ...field })) },
      primaryType: "Quote" as const,
      message,
    };
    const signature = await account.signTypedData(typedDataForSigning({ typedData }));
    const quote: Quote = {
      quoteId: `qt_${idHex}`,
      route: route.id,
      assetIn: request.assetIn,
      assetOut: request.assetOut,
      amountIn: message.amountIn,
      expectedOutput: message.expectedOutput,
      minOutput: message.minOutput,
      fees: { action: message.actionFee, finalize: message.finalizeFee },
      deadline: message.deadline,
      expiresAt: new Date((now + settings.validForSeconds) * 1000).toISOString(),
      relayer: account.address,
      signature,
      typedData,
    };
    const stored = store.insertQuote(
      { id: quote.quoteId, quote, expiresAt: now + settings.validForSeconds, client },
      { now, maxLivePerClient: settings.maxLivePerClient, deleteExpiredBefore: now - settings.keepExpiredSeconds },
    );
    if (!stored.ok) throw tooManyQuotes(stored.live, stored.nextExpiry, settings);
    return quote;
  }

  /** The latest block's timestamp (unix seconds). */
  private async chainTime(): Promise<number> {
    try {
      return Number((await withinDeadline(this.deps.chain.getBlock(), this.deps.chainTimeoutMs)).timestamp);
    } catch (error) {
      throw chainUnavailable(error);
    }
  }

  /** The adapter's output for amountIn now; a pair without a price is a 503 the client retries. */
  private async price(route: ExternalActionRoute, request: QuoteRequest, amountIn: bigint): Promise<bigint> {
    try {
      return await withinDeadline(
        this.deps.chain.readContract({ address: route.adapter.address as `0x${string}`, abi: adapterAbi, functionName: "quote", args: [request.assetIn as `0x${string}`, request.assetOut as `0x${string}`, amountIn] }),
        this.deps.chainTimeoutMs,
      );
    } catch (error) {
      const reverted = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : null;
      if (reverted instanceof ContractFunctionRevertedError) {
        if (reverted.data?.errorName === "PriceNotSet") {
          throw new ProblemError("price_unavailable", `route ${route.name} has no price for ${request.assetIn} -> ${request.assetOut} yet`, { headers: { "retry-after": "5" } });
        }
        // The chain answered: the adapter refuses this request (an amount its price overflows, say). No
        // outage, so no 503 and no Retry-After: the same request would be refused again.
        const name = reverted.data?.errorName ?? "revert";
        const args = (reverted.data?.args ?? []).map((a) => String(a));
        throw new ProblemError("quote_refused", `route ${route.name}'s adapter cannot price ${amountIn} of ${request.assetIn} -> ${request.assetOut}: it reverted with ${name}(${args.join(", ")})${reverted.reason ? ` (${reverted.reason})` : ""}`, {
          extensions: { revert: { name, args } },
        });
      }
      throw chainUnavailable(error);
    }
  }
}
