import type { FastifyBaseLogger } from "fastify";
import type { PublicClient } from "viem";
import type { OperationStore, StoredAttempt } from "../store/types.ts";

/** Broadcasts stored bytes. Node answers that need no action here are recognised by name. */
export async function broadcast({ store, chain, log }: { store: OperationStore; chain: PublicClient; log: FastifyBaseLogger }, attempt: StoredAttempt, operation: string): Promise<void> {
  await store.flush(); // never sent before it is on disk: a power loss must not forget a sent nonce
  try {
    await chain.request({ method: "eth_sendRawTransaction", params: [attempt.raw] });
  } catch (error) {
    const message = `${(error as { details?: string }).details ?? ""} ${(error as Error).message}`.toLowerCase();
    // already known: it is in the pool. nonce too low: one of our attempts was mined (or the nonce
    // was taken; the watcher tells which). underpriced: the watcher's next bump outbids. insufficient
    // funds: kept and re-broadcast once the relayer is refunded.
    const kind = /already known|known transaction|already imported/.test(message)
      ? "already-known"
      : /nonce too low/.test(message)
        ? "nonce-too-low"
        : /underpriced/.test(message)
          ? "underpriced"
          : /insufficient funds/.test(message)
            ? "insufficient-funds"
            : "other";
    if (kind !== "already-known") log.warn({ operation, hash: attempt.hash, kind }, "broadcast refused");
  }
}
