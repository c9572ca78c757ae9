import type { Address } from "viem";
import { ACTION_ROUTES } from "../../harness/index.ts";
import { createAccountKeys, prepareAction, type QueueClient } from "../../harness/client/index.ts";
import type { poolFixture } from "./pool.ts";

/**
 * A funded dUSDC note (31) and a proven action through `route` spending 30 of it for `assetOut`, with the
 * client library, at the quoted fee or `fee`; not yet submitted.
 */
export async function provenAction(pool: Awaited<ReturnType<typeof poolFixture>>, queue: QueueClient, assetOut: Address, route: keyof typeof ACTION_ROUTES, fee?: bigint) {
  const keys = createAccountKeys();
  const config = await queue.beforePrepare();
  const quote = await queue.quote(config, { route: ACTION_ROUTES[route], assetIn: pool.asset, assetOut, amountIn: pool.usdc("30") });
  const { state, input } = await pool.fundedNote(2, keys, pool.usdc("31"));
  const prepared = await prepareAction({ config, quote, prover: pool.prover, tree: state.tree, keys, inputs: [input], ...(fee === undefined ? {} : { fee }) });
  return { keys, config, quote, prepared };
}
