import { createPublicClient, defineChain, http, type PublicClient } from "viem";

/**
 * Sepolia with the RPC the runtime actually talks to. Defined here rather than imported from
 * viem/chains, whose index loads every chain viem knows (~0.4 s of start-up).
 */
export function sepoliaAt(rpcUrl: string) {
  return defineChain({
    id: 11155111,
    name: "Sepolia",
    nativeCurrency: { name: "Sepolia Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    testnet: true,
  });
}

export function createChainClient(rpcUrl: string): PublicClient {
  // Short timeout and one retry: a dev chain answers in milliseconds, and the routes turn a dead
  // chain into a 503 rather than hanging the client.
  // cacheTime 0: viem otherwise caches the block number for 4 s, and confirmations would lag by that.
  return createPublicClient({ chain: sepoliaAt(rpcUrl), cacheTime: 0, pollingInterval: 100, transport: http(rpcUrl, { timeout: 10_000, retryCount: 1 }) });
}
