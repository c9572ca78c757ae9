import { createPublicClient, defineChain, http, type PublicClient } from "viem";
import { sepolia } from "viem/chains";

/** Sepolia's parameters with the RPC the runtime actually talks to. */
export function sepoliaAt(rpcUrl: string) {
  return defineChain({ ...sepolia, rpcUrls: { default: { http: [rpcUrl] } } });
}

export function createChainClient(rpcUrl: string): PublicClient {
  // Short timeout and no retries: a dev chain answers in milliseconds, and the routes turn a dead
  // chain into a 503 rather than hanging the client.
  return createPublicClient({ chain: sepoliaAt(rpcUrl), transport: http(rpcUrl, { timeout: 10_000, retryCount: 1 }) });
}
