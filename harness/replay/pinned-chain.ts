import { createPublicClient, http, type PublicClient, type Transport } from "viem";
import { sepoliaAt } from "../../src/chain/client.ts";

/** Where each read names its block, by method: the parameter a pinned view sets. */
const BLOCK_PARAM: Record<string, number> = {
  eth_call: 1,
  eth_estimateGas: 1,
  eth_createAccessList: 1,
  eth_getBalance: 1,
  eth_getCode: 1,
  eth_getTransactionCount: 1,
  eth_getStorageAt: 2,
  eth_getBlockByNumber: 0,
  eth_feeHistory: 1,
};
/** The tags that mean "now": a pinned view answers them at its block. A number or a hash is left as asked. */
const NOW_TAGS = new Set(["latest", "pending", "safe", "finalized", undefined]);

/**
 * A viem client whose reads are all at one block: the relayer's checks read "latest", and a replay at
 * `--at <block>` (or at the head, once resolved, so that every check and the trace see one state) must
 * read that block instead. eth_blockNumber answers it too. anvil answers for a past block from the
 * state it kept of it (a chain loaded from a bundle keeps the states it was saved with).
 */
export function pinnedChain(rpcUrl: string, block: bigint): PublicClient {
  const tag = `0x${block.toString(16)}`;
  const base = http(rpcUrl, { timeout: 30_000, retryCount: 0 });
  // viem's own HTTP transport underneath: a revert's data reaches the checks as the runtime's client gives it.
  const transport: Transport = (options) => {
    const inner = base(options);
    return {
      ...inner,
      request: (async ({ method, params }: { method: string; params?: unknown }) => {
        if (method === "eth_blockNumber") return tag;
        const args = Array.isArray(params) ? [...params] : [];
        const at = BLOCK_PARAM[method];
        if (at !== undefined && NOW_TAGS.has(args[at] as string | undefined)) {
          while (args.length < at) args.push(undefined);
          args[at] = tag;
        }
        return inner.request({ method, params: args } as never);
      }) as typeof inner.request,
    };
  };
  return createPublicClient({ chain: sepoliaAt(rpcUrl), cacheTime: 0, transport });
}
