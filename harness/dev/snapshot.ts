import type { Hex } from "viem";
import type { RelayControl } from "../../src/relay/control.ts";
import { JsonRpcError, jsonRpc, jsonRpcBatch } from "../chain/index.ts";
import type { StoreCheckpoint } from "../../src/relay/store.ts";

/** A moment of a whole stack, chain and operation store together, that it can be reverted to. */
export interface StackSnapshot {
  readonly blockNumber: number;
  readonly blockHash: Hex;
}

/** A snapshot that cannot be taken or reverted to (released, another stack's, or the chain would not go back). */
export class SnapshotError extends Error {
  override name = "SnapshotError";
}

interface Held {
  /** anvil's snapshot id: single-use, so a new one is taken after every revert. */
  chainId: Hex;
  /** When anvil took chainId: reverting to a snapshot drops the ones taken after it. */
  seq: number;
  store: StoreCheckpoint | null;
  /** The mining mode: anvil's snapshots do not hold it. */
  automine: boolean;
  intervalSeconds: number | null;
}

/** The call that puts the mining mode back: automine, interval mining, or neither (mined on demand). */
function miningMode(entry: Held): [string, unknown[]] {
  if (!entry.automine && entry.intervalSeconds) return ["evm_setIntervalMining", [entry.intervalSeconds]];
  return ["evm_setAutomine", [entry.automine]];
}

export interface StackSnapshots {
  take(): Promise<StackSnapshot>;
  /** Reverts, and drops (as anvil does) every snapshot taken after this one. */
  revert(snapshot: StackSnapshot): Promise<void>;
  /** Whether a snapshot can still be reverted to. */
  has(snapshot: StackSnapshot): boolean;
  release(snapshot: StackSnapshot): void;
}

/**
 * Snapshots of a stack: anvil's evm_snapshot plus a checkpoint of the runtime's operation store, taken
 * and restored with the relayer paused, so the store always describes the chain it sits beside. One at
 * a time: a revert and a snapshot never interleave.
 */
export function createSnapshots(args: { rpcUrl: string; control: RelayControl | null }): StackSnapshots {
  const { control } = args;
  const held = new Map<StackSnapshot, Held>();
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work);
    queue = run.catch(() => {});
    return run;
  };
  let nextSeq = 1;
  // The chain's refusals (an unknown snapshot id, say) are this module's errors.
  const asSnapshotError = (error: unknown) => {
    throw error instanceof JsonRpcError ? new SnapshotError(error.message) : error;
  };
  const rpc = <T>(method: string, params: unknown[] = []) => jsonRpc<T>(args.rpcUrl, method, params).catch(asSnapshotError);
  const batch = (calls: Array<[method: string, params?: unknown[]]>) => jsonRpcBatch(args.rpcUrl, calls).catch(asSnapshotError);

  /** With the relayer paused: nothing it does lands between the chain's and the store's copies. */
  const paused = async <T>(work: () => Promise<T>): Promise<T> => {
    await control?.pause();
    try {
      return await work();
    } finally {
      control?.resume();
    }
  };

  return {
    take: () =>
      serial(() =>
        paused(async () => {
          const [automine, interval, latest] = await batch([["anvil_getAutomine"], ["anvil_getIntervalMining"], ["eth_getBlockByNumber", ["latest", false]]]);
          const block = latest as { number: Hex; hash: Hex };
          const chainId = await rpc<Hex>("evm_snapshot");
          const snapshot: StackSnapshot = Object.freeze({ blockNumber: Number(block.number), blockHash: block.hash });
          held.set(snapshot, { chainId, seq: nextSeq++, store: control?.checkpoint() ?? null, automine: automine as boolean, intervalSeconds: (interval as number | null) ?? null });
          return snapshot;
        }),
      ),

    revert: (snapshot) =>
      serial(() =>
        paused(async () => {
          const entry = held.get(snapshot);
          if (!entry) throw new SnapshotError("this snapshot was released, or belongs to another stack");
          // Quiesce the chain first: a revert while automine is still mining a block can leave that block
          // on top of the reverted state. Three round trips, each a batch of calls independent of one another.
          await batch([["evm_setAutomine", [false]], ["evm_setIntervalMining", [0]], ["anvil_dropAllTransactions"]]);
          let block: { number: Hex; hash: Hex };
          try {
            const reverted = await rpc<boolean>("evm_revert", [entry.chainId]);
            // Automine back on with the pool empty mines nothing: the snapshot and the head read agree.
            const [chainId, latest] = await batch([["evm_snapshot"], ["eth_getBlockByNumber", ["latest", false]], miningMode(entry)]);
            block = latest as typeof block;
            if (!reverted || Number(block.number) !== snapshot.blockNumber || block.hash !== snapshot.blockHash) {
              throw new SnapshotError(`the chain did not go back to block ${snapshot.blockNumber} (${snapshot.blockHash}): it is at ${Number(block.number)} (${block.hash})`);
            }
            entry.chainId = chainId as Hex; // anvil's snapshots are single-use: this one replaces it
          } catch (error) {
            await batch([miningMode(entry)]).catch(() => {});
            throw error;
          }
          for (const [other, later] of held) {
            if (later.seq > entry.seq) {
              held.delete(other);
              if (later.store) control?.release(later.store);
            }
          }
          entry.seq = nextSeq++;
          if (entry.store) control?.restore(entry.store);
        }),
      ),

    has: (snapshot) => held.has(snapshot),

    release(snapshot) {
      const entry = held.get(snapshot);
      if (!entry) return;
      held.delete(snapshot);
      if (entry.store) control?.release(entry.store);
    },
  };
}
