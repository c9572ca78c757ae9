import { createPublicClient, webSocket } from "viem";
import { sepoliaAt } from "./client.ts";

export interface HeadSubscription {
  close(): Promise<void>;
}

/** Between a lost socket and the next attempt. */
const RECONNECT_DELAY_MS = 1_000;

/** How long close() waits for a socket still opening, to close it: a handshake may never be answered. */
const CLOSE_WAIT_MS = 1_000;

/**
 * Follows new blocks by subscription (eth_subscribe newHeads over the node's WebSocket) and calls
 * `onHead` for each: the relayer looks at once instead of at its next poll. The poll stays: a dropped
 * socket or a node without WebSocket costs latency, never correctness.
 *
 * A lost socket is reopened here, every second, rather than by viem's `reconnect`, which prints each
 * failed attempt with console.error: an operator's log would get a stray line a second while the node is down.
 */
export function subscribeNewHeads(wsUrl: string, onHead: (number: bigint) => void, onError: (error: Error) => void): HeadSubscription {
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let current: { drop(): Promise<void> } | null = null;

  const connect = () => {
    if (closed) return;
    const client = createPublicClient({ chain: sepoliaAt(wsUrl), transport: webSocket(wsUrl, { retryCount: 0, reconnect: false, keepAlive: { interval: 30_000 } }) });
    let dropped = false;
    const drop = async () => {
      if (dropped) return;
      dropped = true;
      unwatch();
      // viem keeps one socket per URL until it is closed: a dead one would be handed out again. One still
      // opening is closed once it opens; viem gives no way to abort its handshake, and close() does not
      // wait on one the node never answers (the runtime's close, and a SIGTERM's exit, would hang).
      const closing = client.transport
        .getRpcClient()
        .then((socket: { close(): void }) => socket.close())
        .catch(() => {});
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([closing, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS).unref()))]);
      clearTimeout(timer);
    };
    const unwatch = client.watchBlockNumber({
      onBlockNumber: (n) => onHead(n),
      onError: (error) => {
        if (dropped || closed) return;
        onError(error);
        void drop().then(() => {
          if (!closed) retry = setTimeout(connect, RECONNECT_DELAY_MS);
        });
      },
      emitMissed: false,
      emitOnBegin: false,
    });
    current = { drop };
  };
  connect();

  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      await current?.drop();
    },
  };
}
