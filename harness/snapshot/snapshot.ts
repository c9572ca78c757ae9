import type { Hex } from "viem";
import type { RelayControl } from "../../src/relay/control.ts";
import { JsonRpcError, dropStrayBlocksInDump, jsonRpc, jsonRpcBatch } from "../chain/index.ts";
import type { StoreCheckpoint } from "../../src/store/types.ts";
import { controlLock } from "./control-lock.ts";
import { QueueDevstackError } from "../../src/errors/index.ts";

/** A moment of a whole stack, chain and operation store together, that it can be reverted to. */
export interface StackSnapshot {
  readonly blockNumber: number;
  readonly blockHash: Hex;
}

/** A snapshot that cannot be taken or reverted to (released, another stack's, or the chain would not go back). */
export class SnapshotError extends QueueDevstackError {
  override name = "SnapshotError";
  readonly code = "snapshot_failed";
}

interface Held {
  /**
   * anvil's ids of this moment, each single-use: `spare` was taken just before `primary`, so a revert
   * to `primary` keeps it (anvil drops the id reverted to and every later one). It is the fallback
   * when a revert to `primary` does not take.
   */
  primary: Hex;
  spare: Hex;
  /** When taken (or last reverted to): reverting to a snapshot drops the ones taken after it. */
  seq: number;
  store: StoreCheckpoint | null;
  /** The mining mode: anvil's snapshots do not hold it. */
  automine: boolean;
  intervalSeconds: number | null;
  /**
   * The chain's clock against the wall clock (seconds ahead) when taken: anvil's revert sets its clock
   * to the block's own timestamp, the genesis date for a reset, so the revert sets it back to this.
   */
  clockOffset: number;
  blockTimestamp: number;
  /**
   * What anvil's revert keeps as the last test left it: the next block's base fee (anvil_setNextBlockBaseFeePerGas,
   * or risen with full blocks) and the coinbase. A timestamp interval is never kept (anvil cannot read it back).
   */
  baseFee: Hex | null;
  coinbase: Hex;
  /** Whether the relayer was paused by the dev control (or a loaded bundle's hold): a revert puts that back. */
  relayerPaused: boolean;
  /**
   * The chain itself (anvil_dumpState, with its past states), for a snapshot taken `durable` (the clean
   * one): what a revert reloads when anvil's ids are gone. A reorg that replaces the snapshot's block
   * takes both ids with it (evm_revert: "Resource not found"), and no id survives anvil_reset.
   */
  dump: Hex | null;
}

type Block = { number: Hex; hash: Hex; timestamp: Hex };

/** The call that puts the mining mode back: automine, interval mining, or neither (mined on demand). */
function miningMode(entry: Held): [string, unknown[]] {
  if (!entry.automine && entry.intervalSeconds) return ["evm_setIntervalMining", [entry.intervalSeconds]];
  return ["evm_setAutomine", [entry.automine]];
}

/** The call that puts the chain's clock where it was against the wall clock when the snapshot was taken. */
function clockBack(entry: Held): [string, unknown[]] {
  return ["evm_setTime", [Math.max(Math.floor(Date.now() / 1000) + entry.clockOffset, entry.blockTimestamp)]];
}

/**
 * What a revert puts back that anvil's evm_revert keeps as the last test left it: the mining mode, the
 * clock, no timestamp interval, the next block's base fee, the coinbase.
 */
function putBack(entry: Held): Array<[string, unknown[]]> {
  return [
    miningMode(entry),
    clockBack(entry),
    ["anvil_removeBlockTimestampInterval", []],
    ...(entry.baseFee ? [["anvil_setNextBlockBaseFeePerGas", [entry.baseFee]] as [string, unknown[]]] : []),
    ["anvil_setCoinbase", [entry.coinbase]],
  ];
}

/** How long a revert waits for automine to mine what the pool holds before it drops it. */
const POOL_WAIT_MS = 2_000;

/** The chain with its past states (a reorg below the reloaded block, a read at an earlier one, work as before). */
const DUMP: [string, unknown[]] = ["anvil_dumpState", [true]];

/** anvil's ids are numbers: the one taken first is the smaller. */
const inOrder = (ids: Hex[]) => ids.sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));

/**
 * Tests only: awaited, when set, right after each evm_revert (a test mines a block there, as anvil's
 * race does, to see the fallback); `roundTrip` is told the methods of each request to anvil. Never set
 * by the harness itself.
 */
export const snapshotHooks: { afterRevert?: () => Promise<void>; roundTrip?: (methods: string[]) => void } = {};

export interface StackSnapshots {
  /** `durable`: also keeps the chain itself, so that a revert to it can never be lost (the clean snapshot: one dump at start). */
  take(options?: { durable?: boolean }): Promise<StackSnapshot>;
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
export function createSnapshots(args: {
  rpcUrl: string;
  control: RelayControl | null;
  /** A fork's anvil forks this again before a durable snapshot is reloaded (anvil_reset alone would leave a chain without the upstream). */
  fork?: { url: string; blockNumber: bigint } | undefined;
  /** Told when a revert fell back to reloading a durable snapshot's chain, with why anvil's revert failed (for the stack's log). */
  onReload?: (why: string, snapshot: StackSnapshot) => void;
}): StackSnapshots {
  const { control } = args;
  const held = new Map<StackSnapshot, Held>();
  /** Snapshots that can no longer be reverted to, and why: named as such, not as released. */
  const lost = new WeakMap<StackSnapshot, string>();
  const serial = controlLock().run;
  let nextSeq = 1;
  // The chain's refusals (an unknown snapshot id, say) are this module's errors.
  const asSnapshotError = (error: unknown) => {
    throw error instanceof JsonRpcError ? new SnapshotError(error.message) : error;
  };
  const rpc = <T>(method: string, params: unknown[] = []) => {
    snapshotHooks.roundTrip?.([method]);
    return jsonRpc<T>(args.rpcUrl, method, params).catch(asSnapshotError);
  };
  const batch = (calls: Array<[method: string, params?: unknown[]]>) => {
    snapshotHooks.roundTrip?.(calls.map(([method]) => method));
    return jsonRpcBatch(args.rpcUrl, calls).catch(asSnapshotError);
  };

  /** Forgets a snapshot and frees its store checkpoint (anvil's ids are dropped by the next revert to an earlier one). */
  const forget = (snapshot: StackSnapshot) => {
    const entry = held.get(snapshot);
    if (!entry) return;
    held.delete(snapshot);
    if (entry.store) control?.release(entry.store);
  };

  /**
   * With the relayer paused: nothing it does lands between the chain's and the store's copies. A revert
   * also holds admissions (they answer 503 chain_reverting): one checked against the chain being
   * reverted, or stored into the store being put back, would survive into the moment reverted to.
   */
  const paused = async <T>(work: () => Promise<T>, admissions: "admit" | "hold" = "admit"): Promise<T> => {
    await control?.pause();
    const release = admissions === "hold" ? control?.holdAdmissions() : undefined;
    try {
      return await work();
    } finally {
      release?.();
      control?.resume();
    }
  };

  const latest: [string, unknown[]] = ["eth_getBlockByNumber", ["latest", false]];
  const matches = (block: Block, snapshot: StackSnapshot) => Number(block.number) === snapshot.blockNumber && block.hash === snapshot.blockHash;

  /**
   * No block is being mined, nor will be: automine's pending transactions mined, mining off, the pool
   * emptied, then one empty block mined. anvil 1.7.1 mines a transaction after answering
   * eth_sendTransaction, and its evm_revert does not wait for a block being mined (it does not take the
   * mining lock): a revert that meets one answers true and leaves that block on top of the reverted
   * state, or the head ahead of it. An empty pool says automine's blocks are done; evm_mine waits for
   * the lock (an interval block). Fixed upstream after 1.7.1, where evm_revert takes the lock
   * (foundry-rs/foundry 48a39edb5c, #15343; related: #6463); repro: scripts/anvil-revert-repro.mjs.
   */
  const quiesce = async () => {
    // Automine on: a transaction leaves the pool only once the block mining it is done (anvil's
    // on_mined_block), so an empty pool means no automine block is under way. evm_mine alone could not
    // say so: automine takes the transactions from the pool before it asks for the mining lock, so an
    // evm_mine can come first and that block land after the revert (seen twice in soaks of 3,000 under load).
    for (const started = performance.now(); performance.now() - started < POOL_WAIT_MS; ) {
      const [automine, pool] = (await batch([["anvil_getAutomine"], ["txpool_status"]])) as [boolean, { pending: Hex }];
      if (!automine || Number(pool.pending) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    // Sent one after another: anvil starts a batch's calls in order, but one waiting for a lock lets
    // the next run (futures::join_all), so a batched evm_mine could come before the mining mode changed.
    await batch([["evm_setAutomine", [false]], ["evm_setIntervalMining", [0]]]);
    await rpc("anvil_dropAllTransactions");
    // Waits for a block interval mining may have under way (mining takes a fair lock).
    await rpc("evm_mine");
  };

  /**
   * One revert to anvil's `id`, then, in one batch: the head (whether it took), anvil's new id(s) of the
   * moment reverted to, and what putBack() puts back. Whether the head is the snapshot's.
   */
  const revertTo = async (id: Hex, entry: Held, snapshot: StackSnapshot, newIds: 1 | 2): Promise<{ took: boolean; ids: Hex[]; head: Block }> => {
    const reverted = await rpc<boolean>("evm_revert", [id]);
    if (snapshotHooks.afterRevert) await snapshotHooks.afterRevert();
    const answers = await batch([latest, ...Array.from({ length: newIds }, (): [string] => ["evm_snapshot"]), ...putBack(entry)]);
    // The head read again, on its own: a block that was still being mined would show here, after the batch.
    const head = reverted && matches(answers[0] as Block, snapshot) ? await rpc<Block>(...latest) : (answers[0] as Block);
    return { took: reverted && matches(head, snapshot), ids: inOrder(answers.slice(1, 1 + newIds) as Hex[]), head };
  };

  /**
   * The common case in one round trip: the chain is still (no transaction in the pool, no interval
   * mining), so no block can be under way, and the revert needs no quiesce. One batch reads that, then
   * reverts, takes the new id, reads the head and puts back what putBack() does. anvil starts a
   * batch's calls in order, each running until it waits for a lock (futures::join_all); 1.7.1's revert
   * moves head and clock before its one wait, for the state, and the new snapshot waits behind it there.
   * Whether it took: the chain was still, the revert answered true and the head is the snapshot's. If
   * not (a transaction sent just before, as anvil's race needs), the caller quiesces and reverts to the spare.
   */
  const revertStill = async (entry: Held, snapshot: StackSnapshot): Promise<{ took: boolean; id: Hex }> => {
    const checks: Array<[string, unknown[]?]> = [["anvil_getIntervalMining"], ["txpool_status"], ["evm_revert", [entry.primary]]];
    const after: Array<[string, unknown[]?]> = [["evm_snapshot"], latest, ...putBack(entry)];
    let answers: unknown[];
    if (snapshotHooks.afterRevert) {
      // A test's hook goes where anvil's race would put a block: between the revert and the head read.
      const before = await batch(checks);
      await snapshotHooks.afterRevert();
      answers = [...before, ...(await batch(after))];
    } else answers = await batch([...checks, ...after]);
    const [interval, pool, reverted, id, head] = answers as [number | null, { pending: Hex; queued: Hex }, boolean, Hex, Block];
    const still = !interval && Number(pool.pending) === 0 && Number(pool.queued) === 0;
    return { took: still && reverted && matches(head, snapshot), id };
  };

  const lose = (snapshot: StackSnapshot, why: string) => {
    forget(snapshot);
    lost.set(snapshot, why);
  };

  /**
   * The way back that needs no snapshot id: anvil_reset (a fresh chain, its pool emptied; a fork forked
   * again at its point) and anvil_loadState of the dump, which brings back the same blocks, hashes and
   * past states and nothing made after; then two new ids and what putBack() puts back. Quiesced first:
   * automine's blocks already under way (a reorg's transactions sent again) would land on the loaded
   * chain. The head read again on its own, as revertTo() does; a second try if a block landed.
   */
  const reload = async (entry: Held, snapshot: StackSnapshot): Promise<void> => {
    const reset: [string, unknown[]] = ["anvil_reset", args.fork ? [{ forking: { jsonRpcUrl: args.fork.url, blockNumber: Number(args.fork.blockNumber) } }] : []];
    let head: Block | undefined;
    // Once, on the first reload: the dump also holds the genesis anvil made before it loaded its state file.
    entry.dump = dropStrayBlocksInDump(entry.dump as Hex, snapshot.blockHash);
    for (let attempt = 1; attempt <= 2; attempt++) {
      await quiesce();
      await rpc(...reset);
      await rpc("anvil_loadState", [entry.dump]);
      const answers = await batch([latest, ["evm_snapshot"], ["evm_snapshot"], ...putBack(entry)]);
      head = matches(answers[0] as Block, snapshot) ? await rpc<Block>(...latest) : (answers[0] as Block);
      if (matches(head, snapshot)) {
        [entry.spare, entry.primary] = inOrder(answers.slice(1, 3) as Hex[]) as [Hex, Hex];
        return;
      }
    }
    await batch([miningMode(entry)]).catch(() => {});
    throw new SnapshotError(`the chain reloaded from block ${snapshot.blockNumber} (${snapshot.blockHash}) is at ${Number(head?.number)} (${head?.hash})`);
  };

  return {
    take: (options = {}) =>
      serial(() => {
        // Before this snapshot's own pause: only the dev control's (a bundle's hold is one) can be on now.
        const relayerPaused = control?.paused() ?? false;
        return paused(async () => {
          const [automine, interval, offset, before, next, coinbase] = await batch([
            ["anvil_getAutomine"],
            ["anvil_getIntervalMining"],
            ["evm_increaseTime", [0]],
            latest,
            ["eth_getBlockByNumber", ["pending", false]],
            ["eth_coinbase"],
          ]);
          // Two ids of one moment; a block mined in between (automine on) shows as another head: again.
          for (let attempt = 1; ; attempt++) {
            // The dump in the same batch: one round trip, taken of the same moment (the relayer is paused).
            const [spare, primary, block, dump] = (await batch([["evm_snapshot"], ["evm_snapshot"], latest, ...(options.durable ? [DUMP] : [])])) as [Hex, Hex, Block, Hex?];
            if (block.hash !== (before as Block).hash && attempt < 3) continue;
            const snapshot: StackSnapshot = Object.freeze({ blockNumber: Number(block.number), blockHash: block.hash });
            const [first, second] = inOrder([spare, primary]) as [Hex, Hex];
            held.set(snapshot, {
              spare: first,
              primary: second,
              seq: nextSeq++,
              store: control?.checkpoint() ?? null,
              automine: automine as boolean,
              intervalSeconds: (interval as number | null) ?? null,
              clockOffset: Number(offset),
              blockTimestamp: Number(block.timestamp),
              baseFee: (next as { baseFeePerGas?: Hex } | null)?.baseFeePerGas ?? null,
              coinbase: coinbase as Hex,
              relayerPaused,
              dump: dump ?? null,
            });
            return snapshot;
          }
        });
      }),

    revert: (snapshot) =>
      serial(() =>
        paused(async () => {
          const entry = held.get(snapshot);
          if (!entry) throw new SnapshotError(lost.get(snapshot) ?? "this snapshot was released, or belongs to another stack");
          // Why anvil's ids could not go back, or null when they did.
          let failed: string | null = null;
          try {
            const first = await revertStill(entry, snapshot);
            if (first.took) entry.primary = first.id;
            else {
              // It did not take: back to the spare (which drops the id just taken of the wrong state), and two new ids.
              await quiesce();
              const second = await revertTo(entry.spare, entry, snapshot, 2);
              if (second.took) [entry.spare, entry.primary] = second.ids as [Hex, Hex];
              else failed = `the chain did not go back to block ${snapshot.blockNumber} (${snapshot.blockHash}), twice: it is at ${Number(second.head.number)} (${second.head.hash})`;
            }
          } catch (error) {
            // Mining as it was (the quiesce turned it off).
            await batch([miningMode(entry)]).catch(() => {});
            // anvil refused the revert (its snapshot's block reorged away: "Resource not found"): the ids
            // are spent. Anything else (anvil gone, a test's hook) leaves the snapshot as it was.
            if (!(error instanceof SnapshotError)) throw error;
            failed = error.message;
          }
          if (failed !== null && !entry.dump) {
            const why = `this snapshot is lost: ${failed}. anvil's snapshot ids do not survive a reorg of their block; stack.reset() still goes back to the clean state`;
            lose(snapshot, why);
            throw new SnapshotError(why);
          }
          if (failed !== null) {
            await reload(entry, snapshot);
            args.onReload?.(failed, snapshot);
            // anvil_reset took every other snapshot's ids with it.
            for (const other of [...held.keys()]) if (other !== snapshot) lose(other, "this snapshot is lost: a reset reloaded the chain (anvil_reset), which drops anvil's snapshot ids; take a new one");
          }
          for (const [other, later] of held) if (later.seq > entry.seq) forget(other);
          entry.seq = nextSeq++;
          if (entry.store) control?.restore(entry.store);
          // A pause from the dev control belongs to its moment, as a fault does: the relayer as it was.
          if (entry.relayerPaused) await control?.pause("dev");
          else control?.resume("dev");
        }, "hold"),
      ),

    has: (snapshot) => held.has(snapshot),

    release: forget,
  };
}
