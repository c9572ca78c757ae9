import { createPublicClient, defineChain, http, type Chain, type PublicClient } from "viem";
import { chainFetch } from "./node-fetch.ts";

/**
 * Sepolia with the RPC the runtime actually talks to. Defined here rather than imported from
 * viem/chains, whose index loads every chain viem knows (~0.4 s of start-up).
 */
export function sepoliaAt(rpcUrl: string): Chain {
  return defineChain({
    id: 11155111,
    name: "Sepolia",
    nativeCurrency: { name: "Sepolia Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    testnet: true,
  });
}

/** How long one RPC call may take, and how often a failed one is retried. */
export interface ChainClientTimeouts {
  timeoutMs: number;
  retryCount: number;
}

export function createChainClient(rpcUrl: string, { timeoutMs, retryCount }: ChainClientTimeouts = { timeoutMs: 10_000, retryCount: 1 }): PublicClient {
  // cacheTime 0: viem otherwise caches the block number for 4 s, and confirmations would lag by that.
  // chainFetch: nodeFetch (half fetch's CPU per call) with viem's cap on an answer (node-fetch.ts).
  return createPublicClient({
    chain: sepoliaAt(rpcUrl),
    cacheTime: 0,
    pollingInterval: 100,
    transport: http(rpcUrl, { timeout: timeoutMs, retryCount, batch: { wait: 0 }, fetchFn: chainFetch }),
  });
}
