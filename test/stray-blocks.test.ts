import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeDump, dropStrayBlocksInDump, encodeDump, withoutStrayBlocks, startChain, type Chain, type DumpedChain } from "../harness/chain/index.ts";
import { GENESIS_STATE_PATH } from "../harness/deployment/index.ts";
import { rpc } from "./support/rpc.ts";

// CI failed once on reset-reorg.test.ts: after a reset that reloaded the clean chain (anvil_reset, then
// anvil_loadState of the dump taken at start), "mine 1, then reorg 2" answered 422 "Required data
// unavailable". A chain started from a state file dumps two blocks 0: the file's and the genesis anvil
// made before loading it. The load maps number 0 to the one listed last, in hash-map order (so about
// one stack in two): then block 0 has another hash and no state. The same held for a persisted chain
// resumed and a bundle loaded. Here the stray one is put last on purpose, so the bug shows every time.
let chain: Chain;
let dir: string;
let original: { block0: Hex; block0Timestamp: Hex; head: Hex };
let dump: Hex;

const hashAt = async (n: number) => (await rpc<{ hash: Hex }>(chain.rpcUrl, "eth_getBlockByNumber", [`0x${n.toString(16)}`, false])).hash;
/** The dump with its blocks 0 in the order that loses: the chain's first (known by its timestamp), the stray one last. */
const strayLast = (state: DumpedChain): DumpedChain => {
  const stray = state.blocks.filter((b) => BigInt(b.header.number as string) === 0n && b.header.timestamp !== original.block0Timestamp);
  return { ...state, blocks: [...state.blocks.filter((b) => !stray.includes(b)), ...stray] };
};
/** Reloads the chain as the reset's fall-back does: anvil_reset, then anvil_loadState. */
const reload = async (hex: Hex) => {
  await rpc(chain.rpcUrl, "anvil_reset", []);
  await rpc(chain.rpcUrl, "anvil_loadState", [hex]);
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "devstack-stray-blocks-"));
  chain = await startChain({ host: "127.0.0.1", port: 0, stateDir: dir, loadState: GENESIS_STATE_PATH });
  const block0 = await rpc<{ hash: Hex; timestamp: Hex }>(chain.rpcUrl, "eth_getBlockByNumber", ["0x0", false]);
  original = { block0: block0.hash, block0Timestamp: block0.timestamp, head: (await rpc<{ hash: Hex }>(chain.rpcUrl, "eth_getBlockByNumber", ["latest", false])).hash };
  dump = await rpc<Hex>(chain.rpcUrl, "anvil_dumpState", [true]);
});
afterAll(async () => {
  await chain?.stop({ graceful: false });
  await rm(dir, { recursive: true, force: true });
});

describe("a dump of a chain started from a state file", () => {
  it("holds a stray block 0 beside the chain's, which a load can take for block 0", async () => {
    const state = decodeDump(dump);
    expect(state.blocks.filter((b) => BigInt(b.header.number as string) === 0n)).toHaveLength(2);
    await reload(encodeDump(strayLast(state)));
    expect(await hashAt(0)).not.toBe(original.block0);
    await expect(rpc(chain.rpcUrl, "eth_getBalance", ["0x0000000000000000000000000000000000000000", "0x0"])).rejects.toThrow(/BlockOutOfRange/);
  });

  it("without the stray block, reloads with block 0 as it was, its state, and a reorg down to it", async () => {
    const cleaned = dropStrayBlocksInDump(encodeDump(strayLast(decodeDump(dump))), original.head);
    expect(decodeDump(cleaned).blocks.filter((b) => BigInt(b.header.number as string) === 0n)).toHaveLength(1);
    await reload(cleaned);
    expect(await hashAt(0)).toBe(original.block0);
    expect(await rpc(chain.rpcUrl, "eth_getBalance", ["0x0000000000000000000000000000000000000000", "0x0"])).toMatch(/^0x/);
    await rpc(chain.rpcUrl, "anvil_mine", ["0x1"]);
    await rpc(chain.rpcUrl, "anvil_reorg", [2, []]);
    expect(await hashAt(0)).toBe(original.block0);
  });

  it("a state file anvil is about to load (a resumed or loaded stack's) is loaded without it, and left as it is", async () => {
    const file = path.join(dir, "chain-state.json");
    const saved = JSON.stringify(strayLast(decodeDump(dump)));
    await writeFile(file, saved);
    const loaded = await withoutStrayBlocks(file, dir);
    const state = JSON.parse(await readFile(loaded.file, "utf8")) as DumpedChain;
    expect(state.blocks.filter((b) => BigInt(b.header.number as string) === 0n)).toHaveLength(1);
    // Its head's line is whole (the head from best_block_number), and its transactions kept.
    expect(state.blocks).toHaveLength(decodeDump(dump).blocks.length - 1);
    expect(state.transactions).toEqual(decodeDump(dump).transactions);
    // The saved file is as it was (a start refused later changes nothing), and the copy goes.
    expect(await readFile(file, "utf8")).toBe(saved);
    await loaded.remove();
    expect((await readdir(dir)).filter((name) => name.startsWith(".anvil-load-"))).toEqual([]);
    // A file that is not a dump is given to anvil as it is, to refuse as before.
    await writeFile(file, "not json");
    expect((await withoutStrayBlocks(file, dir)).file).toBe(file);
  });
});
