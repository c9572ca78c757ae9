import { createPublicClient, webSocket } from "viem";
import { sepoliaAt } from "./client.ts";

export interface HeadSubscription {
  close(): Promise<void>;
}

/**
 * Follows new blocks by subscription (eth_subscribe newHeads over the node's WebSocket) and calls
 * `onHead` for each: the relayer looks at once instead of at its next poll. The poll stays: a dropped
 * socket (viem reconnects it) or a node without WebSocket costs latency, never correctness.
 */
export function subscribeNewHeads(wsUrl: string, onHead: (number: bigint) => void, onError: (error: Error) => void): HeadSubscription {
  const transport = webSocket(wsUrl, { retryCount: 0, reconnect: { attempts: Number.POSITIVE_INFINITY, delay: 1_000 }, keepAlive: { interval: 30_000 } });
  const client = createPublicClient({ chain: sepoliaAt(wsUrl), transport });
  const unwatch = client.watchBlockNumber({ onBlockNumber: (n) => onHead(n), onError, emitMissed: false, emitOnBegin: false });
  return {
    async close() {
      unwatch();
      try {
        (await client.transport.getRpcClient()).close();
      } catch {
        /* never connected */
      }
    },
  };
}
