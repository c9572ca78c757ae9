import { BlockNotFoundError, createPublicClient, http, type Hex } from "viem";
import { redactText, redactUrl } from "../../src/redact.ts";
import { CHAIN_ID } from "./chain.ts";
import { QueueDevstackError } from "../../src/errors/index.ts";

export class ForkUpstreamError extends QueueDevstackError {
  override name = "ForkUpstreamError";
  readonly code = "fork_upstream_failed";
}

export interface ForkPoint {
  url: string;
  /** The URL with credentials removed: the only form that is shown or written. */
  displayUrl: string;
  blockNumber: bigint;
  blockHash: Hex;
}

/**
 * Checks the upstream before anvil is started: it must answer, be Sepolia, and have the block. Without
 * a block number, the upstream's latest block is resolved once and pinned, so the run can be repeated.
 */
export async function resolveForkPoint(url: string, blockNumber?: bigint, via?: string): Promise<ForkPoint> {
  const displayUrl = redactUrl(url);
  // `via`: the stack's forwarder to the upstream (its cache answers when the upstream is unreachable).
  const client = createPublicClient({ transport: http(via ?? url, { timeout: 10_000, retryCount: 0 }) });
  // Every call is inside the redacting catch: viem quotes the URL it called in its errors.
  const ask = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      const reason = redactText((error as { shortMessage?: string }).shortMessage ?? (error as Error).message, url);
      throw new ForkUpstreamError(`the fork RPC ${displayUrl} failed ${what}: ${reason}`);
    }
  };
  const chainId = await ask("eth_chainId", () => client.getChainId());
  if (chainId !== CHAIN_ID) {
    throw new ForkUpstreamError(`the fork RPC ${displayUrl} is chain ${chainId}, not Sepolia (${CHAIN_ID}): refusing to fork it`);
  }
  // A given block is asked for by number (an answer the cache can give offline); only "latest" needs the head.
  const pinned = blockNumber ?? (await ask("eth_blockNumber", () => client.getBlockNumber()));
  const block = await client.getBlock({ blockNumber: pinned }).catch(async (error: unknown) => {
    if (blockNumber !== undefined && error instanceof BlockNotFoundError) {
      const latest = await ask("eth_blockNumber", () => client.getBlockNumber());
      throw new ForkUpstreamError(`fork block ${pinned} is ahead of the upstream's latest block ${latest}`);
    }
    return ask(`eth_getBlockByNumber(${pinned})`, () => Promise.reject(error));
  });
  return { url, displayUrl, blockNumber: pinned, blockHash: block.hash };
}
