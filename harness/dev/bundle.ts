import { mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { z } from "zod";
import type { RelayControl } from "../../src/relay/control.ts";
import { jsonRpc, jsonRpcBatch } from "../chain/index.ts";
import type { ForkReads } from "../chain/index.ts";

/**
 * A repro bundle: one file holding a stack — its chain (anvil_dumpState, with the blocks), the
 * manifest's bytes, and a copy of the operation store — that startDevStack({ load }) brings back on
 * another machine: the same addresses, blocks and block hashes, roots, balances, notes and operation
 * history; operations in flight resume. It holds no key and no credential: the relayer's key is
 * anvil's known dev key, re-derived at load.
 *
 * A fork stack's bundle holds the forked state the stack touched: anvil's dump has only what changed
 * on the fork, so every account, storage slot and block anvil read from the upstream is added (read
 * back from the fork as it is now). It loads as a local chain: no upstream, no network.
 */
export const BUNDLE_FORMAT = "queue-devstack-bundle";
export const BUNDLE_VERSION = 1;

const Bundle = z.strictObject({
  format: z.literal(BUNDLE_FORMAT),
  version: z.int(),
  createdAt: z.string(),
  mode: z.enum(["local", "fork"]),
  /** The fork point of a fork stack's bundle (its upstream's URL is never kept). */
  fork: z.strictObject({ blockNumber: z.int(), blockHash: z.string() }).nullable(),
  /** anvil's state JSON (gzip, base64): what --load-state takes. */
  chain: z.string(),
  manifest: z.string(),
  /** The SQLite operation store (gzip, base64). */
  store: z.string(),
});

export class BundleError extends Error {
  override name = "BundleError";
}

/** Writes the bundle atomically. */
export interface BundleSource {
  rpcUrl: string;
  manifestPath: string;
  control: RelayControl | null;
  /** A fork stack's fork point and what anvil read from its upstream. */
  fork: { blockNumber: number; blockHash: string; reads: ForkReads } | null;
}

export async function saveBundle(args: BundleSource & { file: string }): Promise<{ bytes: number }> {
  const bytes = await bundleBytes(args);
  const tmp = `${args.file}.${process.pid}.tmp`;
  await writeFile(tmp, bytes);
  await rename(tmp, args.file);
  return { bytes: bytes.length };
}

/** The bundle's bytes, taken with the relayer paused so chain and store describe the same moment. */
// Uint8Array (a Buffer in fact): bundle.d.ts is public, and its types need no @types/node.
export async function bundleBytes(args: BundleSource): Promise<Uint8Array> {
  if (!args.control) throw new BundleError("this stack's runtime has no relayer: nothing to save its operations from");
  const scratch = await mkdtemp(path.join(tmpdir(), "queue-devstack-bundle-"));
  try {
    await args.control.pause();
    let chain: string;
    const storeCopy = path.join(scratch, "queue.sqlite");
    try {
      // With the past states: a loaded stack can still trace, replay and reorg what happened before the save.
      chain = await jsonRpc<string>(args.rpcUrl, "anvil_dumpState", [true]).catch((error: unknown) => {
        throw new BundleError(`anvil did not dump its state: ${(error as Error).message}`);
      });
      if (args.fork) chain = `0x${gzipSync(JSON.stringify(await withForkedState(args.rpcUrl, JSON.parse(gunzipSync(Buffer.from(chain.slice(2), "hex")).toString("utf8")) as AnvilState, args.fork.reads))).toString("hex")}`;
      args.control.backupStore(storeCopy);
    } finally {
      args.control.resume();
    }
    const bundle: z.output<typeof Bundle> = {
      format: BUNDLE_FORMAT,
      version: BUNDLE_VERSION,
      createdAt: new Date().toISOString(),
      mode: args.fork ? "fork" : "local",
      fork: args.fork ? { blockNumber: args.fork.blockNumber, blockHash: args.fork.blockHash } : null,
      chain: Buffer.from(chain.slice(2), "hex").toString("base64"), // already gzip
      manifest: await readFile(args.manifestPath, "utf8"),
      store: gzipSync(await readFile(storeCopy)).toString("base64"),
    };
    return gzipSync(JSON.stringify(bundle));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Checks a bundle and writes its chain, manifest and store into a state dir; refuses anything else, writing nothing. */
export async function unpackBundle(file: string, files: { chainState: string; manifest: string; store: string }): Promise<{ mode: "local" | "fork" }> {
  let bundle: z.output<typeof Bundle>;
  try {
    const parsed = JSON.parse(gunzipSync(await readFile(file)).toString("utf8")) as { format?: unknown; version?: unknown };
    if (parsed.format !== BUNDLE_FORMAT) throw new BundleError(`${file} is not a queue-devstack bundle`);
    if (parsed.version !== BUNDLE_VERSION) throw new BundleError(`${file} is a bundle of format version ${String(parsed.version)}; this queue-devstack reads version ${BUNDLE_VERSION}`);
    bundle = Bundle.parse(parsed);
  } catch (error) {
    if (error instanceof BundleError) throw error;
    throw new BundleError(`${file} is not a readable bundle (damaged or truncated): ${(error as Error).message.split("\n")[0]}`);
  }
  await writeFile(files.chainState, gunzipSync(Buffer.from(bundle.chain, "base64")));
  await writeFile(files.manifest, bundle.manifest);
  await writeFile(files.store, gunzipSync(Buffer.from(bundle.store, "base64")));
  return { mode: bundle.mode };
}

interface AnvilState {
  accounts: Record<string, { nonce: number; balance: string; code: string; storage: Record<string, string> }>;
  blocks: Array<{ header: Record<string, unknown> }>;
  [key: string]: unknown;
}

/** anvil's dump header fields (an RPC block has these and more: size, hash, transactions...). */
const HEADER_FIELDS = [
  "parentHash", "sha3Uncles", "miner", "stateRoot", "transactionsRoot", "receiptsRoot", "logsBloom", "difficulty", "number", "gasLimit", "gasUsed",
  "timestamp", "extraData", "mixHash", "nonce", "baseFeePerGas", "withdrawalsRoot", "blobGasUsed", "excessBlobGas", "parentBeaconBlockRoot", "requestsHash",
];

/**
 * anvil's dump of a fork, completed with what it read from the upstream: accounts and slots read but
 * never written (their values now, read from the fork), and the upstream blocks it read (headers only:
 * the same fields give the same hash; their transactions stay upstream).
 */
async function withForkedState(rpcUrl: string, state: AnvilState, reads: ForkReads): Promise<AnvilState> {
  const dumped = new Map(Object.entries(state.accounts).map(([address, account]) => [address.toLowerCase(), { address, account }]));
  for (const address of reads.accounts) {
    const slots = [...(reads.slots.get(address) ?? [])];
    const known = dumped.get(address);
    const missing = known ? slots.filter((slot) => !Object.keys(known.account.storage).some((s) => BigInt(s) === BigInt(slot))) : slots;
    const calls: Array<[string, unknown[]]> = known
      ? []
      : [["eth_getBalance", [address, "latest"]], ["eth_getTransactionCount", [address, "latest"]], ["eth_getCode", [address, "latest"]]];
    for (const slot of missing) calls.push(["eth_getStorageAt", [address, slot, "latest"]]);
    if (calls.length === 0) continue;
    const answers = (await jsonRpcBatch(rpcUrl, calls)) as string[];
    const account = known?.account ?? { balance: answers[0] as string, nonce: Number(answers[1]), code: answers[2] as string, storage: {} };
    const values = answers.slice(known ? 0 : 3);
    missing.forEach((slot, i) => {
      const value = values[i] as string;
      if (BigInt(value) !== 0n) account.storage[`0x${BigInt(slot).toString(16).padStart(64, "0")}`] = value;
    });
    if (!known) state.accounts[address] = account;
  }
  const have = new Set(state.blocks.map((b) => Number(b.header.number)));
  for (const [number, block] of reads.blocks) {
    if (have.has(number)) continue;
    const header = Object.fromEntries(HEADER_FIELDS.filter((field) => block[field] !== undefined).map((field) => [field, block[field]]));
    state.blocks.push({ header, transactions: [], ommers: [], withdrawals: null } as never);
  }
  return state;
}
