import { keccak256, numberToHex, toRlp, type Hex } from "viem";
import { gunzipSync, gzipSync } from "node:zlib";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { ANVIL_RUN_DIR_PREFIX } from "./chain.ts";

/** The parts of anvil's state dump this reads; the rest goes through as it is. */
export interface DumpedChain {
  best_block_number?: unknown;
  blocks: Array<{ header: Record<string, unknown> }>;
  transactions?: Array<{ block_hash?: unknown }>;
  historical_states?: unknown;
  [key: string]: unknown;
}

/** The header fields that are numbers (RLP'd without leading zeros); the others are bytes as they are. */
const QUANTITIES = new Set(["difficulty", "number", "gasLimit", "gasUsed", "timestamp", "baseFeePerGas", "blobGasUsed", "excessBlobGas"]);

/** A dumped block's hash: its header's fields, in the dump's (the consensus) order, RLP'd and hashed. */
export function dumpedBlockHash(header: Record<string, unknown>): Hex {
  const fields = Object.entries(header).map(([name, value]) => (QUANTITIES.has(name) ? (BigInt(value as string) === 0n ? "0x" : numberToHex(BigInt(value as string))) : (value as Hex)));
  return keccak256(toRlp(fields));
}

/**
 * anvil_dumpState keeps every block anvil holds by hash, not only the chain's: a chain started from a
 * state file keeps the genesis anvil made before it loaded the file, beside the file's block 0. Loading
 * such a dump maps each number to the block listed last, and the list is in hash-map order: so half the
 * time block 0 became anvil's own genesis, whose state no dump has (a reorg down to it then fails with
 * "Required data unavailable", and eth_getBlockByNumber(0) answers another hash). This keeps, for every
 * number held twice, only the block on the head's line of parents (with its transactions and past
 * state); a number held once is kept as it is (a fork's dump holds upstream headers with gaps between).
 * `head` is the chain's head hash; without it, the one block at `best_block_number`. Returns the dump
 * itself when there is nothing to drop or the head's line cannot be told.
 */
export function dropStrayBlocks<T extends DumpedChain>(state: T, head?: Hex): T {
  const perNumber = new Map<bigint, number>();
  for (const block of state.blocks) {
    const number = BigInt(block.header.number as string);
    perNumber.set(number, (perNumber.get(number) ?? 0) + 1);
  }
  if ([...perNumber.values()].every((count) => count === 1)) return state;
  const hashes = state.blocks.map((block) => dumpedBlockHash(block.header));
  const byHash = new Map(state.blocks.map((block, index) => [hashes[index] as string, block]));
  let tip = head?.toLowerCase();
  if (tip === undefined) {
    const best = state.best_block_number === undefined ? undefined : BigInt(state.best_block_number as string | number);
    const atBest = [...byHash].filter(([, block]) => BigInt(block.header.number as string) === best);
    if (atBest.length !== 1) return state;
    tip = (atBest[0] as [string, unknown])[0];
  }
  const line = new Set<string>();
  for (let hash: string | undefined = tip; hash !== undefined && byHash.has(hash) && !line.has(hash); ) {
    line.add(hash);
    hash = (byHash.get(hash)?.header.parentHash as string | undefined)?.toLowerCase();
  }
  const numbersOnLine = new Set([...line].map((hash) => BigInt(byHash.get(hash)?.header.number as string)));
  const dropped = new Set(
    [...byHash].filter(([hash, block]) => {
      const number = BigInt(block.header.number as string);
      return (perNumber.get(number) ?? 0) > 1 && numbersOnLine.has(number) && !line.has(hash);
    }).map(([hash]) => hash),
  );
  if (dropped.size === 0) return state;
  const kept = (hash: unknown) => typeof hash !== "string" || !dropped.has(hash.toLowerCase());
  const states = state.historical_states;
  return {
    ...state,
    blocks: state.blocks.filter((_, index) => kept(hashes[index])),
    ...(state.transactions ? { transactions: state.transactions.filter((tx) => kept(tx.block_hash)) } : {}),
    // anvil writes the past states as [hash, state] pairs (a map keyed by hash reads the same way).
    ...(Array.isArray(states)
      ? { historical_states: states.filter((entry) => !Array.isArray(entry) || kept(entry[0])) }
      : states && typeof states === "object"
        ? { historical_states: Object.fromEntries(Object.entries(states).filter(([hash]) => kept(hash))) }
        : {}),
  };
}

/** A dump as anvil_dumpState answers it (hex of gzipped JSON), read. */
export function decodeDump<T = DumpedChain>(dump: Hex | string): T {
  return JSON.parse(gunzipSync(Buffer.from(dump.slice(2), "hex")).toString("utf8")) as T;
}

/** A state in the form anvil_dumpState answers and anvil_loadState takes. */
export function encodeDump(state: unknown): Hex {
  return `0x${gzipSync(JSON.stringify(state)).toString("hex")}`;
}

/** dropStrayBlocks() of a dump as anvil_dumpState answers it, in the same form. */
export function dropStrayBlocksInDump(dump: Hex, head: Hex): Hex {
  const state = decodeDump(dump);
  const line = dropStrayBlocks(state, head);
  return line === state ? dump : encodeDump(line);
}

/**
 * A state file anvil is about to load (a persisted chain's, a bundle's), without its stray blocks: a
 * copy in `dir` when some are dropped (the file itself stays as it is, so a start refused later has
 * changed nothing), else the file itself. `remove()` removes the copy once anvil has read it.
 */
export async function withoutStrayBlocks(file: string, dir: string): Promise<{ file: string; remove: () => Promise<void> }> {
  const same = { file, remove: async () => {} };
  let state: DumpedChain;
  let line: DumpedChain;
  try {
    state = JSON.parse(await readFile(file, "utf8")) as DumpedChain;
    line = dropStrayBlocks(state);
  } catch {
    return same; // not a dump this can read: anvil says what is wrong with it, as before
  }
  if (line === state) return same;
  // Named as anvil's run folders: one a killed start left behind is removed as theirs are (state-dir/leftovers.ts).
  const copy = await mkdtemp(path.join(dir, `${ANVIL_RUN_DIR_PREFIX}load-`));
  const loaded = path.join(copy, path.basename(file));
  await writeFile(loaded, JSON.stringify(line));
  return { file: loaded, remove: () => rm(copy, { recursive: true, force: true }) };
}
