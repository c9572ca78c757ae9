import { createReadStream } from "node:fs";
import { copyFile, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { z } from "zod";
import type { RelayControl } from "../../src/relay/control.ts";
import { parseStoreRows, type StoreRows } from "../../src/store/rows.ts";
import { TERMINAL_STATES } from "../../src/schemas/operation.ts";
import { printable } from "../../src/printable.ts";
import { decodeDump, encodeDump, jsonRpc, jsonRpcBatch } from "../chain/index.ts";
import { PATCHES_FILE, PatchRecords } from "../patch/index.ts";
import { writeFileAtomic } from "../files/index.ts";
import type { ForkReads } from "../chain/index.ts";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import { relayerAddress, settleAttempts } from "./store-check.ts";
import { manifestAgainstConstants } from "./manifest-check.ts";
import { readStoreRows, writeFreshStore } from "./store.ts";
import { formatBytes, gunzipBounded, OverCapError } from "./bounded-gunzip.ts";
import { parseJsonBounded } from "./json.ts";
import { BundleError, type BundlePart } from "./bundle-error.ts";

/** harness/patch's records file: a bundle carries it as it is (importing that folder would pull a compiler worker into every bundle read). */

/**
 * A repro bundle: one file holding a stack — its chain (anvil_dumpState, with the blocks), the
 * manifest's bytes, and the operation store's rows — that startDevStack({ load }) brings back on
 * another machine: the same addresses, blocks and block hashes, roots, balances, notes and operation
 * history; operations in flight wait for the relayer to be resumed. It holds no key and no credential: the relayer's key is
 * anvil's known dev key, re-derived at load.
 *
 * A fork stack's bundle holds the forked state the stack touched: anvil's dump has only what changed
 * on the fork, so every account, storage slot and block anvil read from the upstream is added (read
 * back from the fork as it is now), and every contract its manifest names. It loads as a local chain:
 * no upstream, no network.
 */
export const BUNDLE_FORMAT = "queue-devstack-bundle";
/**
 * 2: the store is its rows as JSON (src/store/rows.ts). 1: the store was an SQLite file; still
 * read, but only its rows, which go through the same checks (store.ts).
 */
export const BUNDLE_VERSION = 2;
const READ_VERSIONS: ReadonlySet<unknown> = new Set([1, 2]);

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
  /** The operation store (gzip, base64): its rows as JSON (version 2), an SQLite file (version 1). */
  store: z.string(),
  /** The patches of a patched stack (`<state dir>/patches.json`, harness/patch): absent when none. Their code is in the chain. */
  patches: z.string().max(4 * 1024 * 1024).optional(),
});

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
  await writeFileAtomic(args.file, bytes, { makeFolder: false });
  return { bytes: bytes.length };
}

/** The bundle's bytes, taken with the relayer paused so chain and store describe the same moment. */
// Uint8Array (a Buffer in fact): bundle.d.ts is public, and its types need no @types/node.
export async function bundleBytes(args: BundleSource): Promise<Uint8Array> {
  if (!args.control) throw new BundleError({ reason: "this stack's runtime has no relayer: nothing to save its operations from" });
  const scratch = await mkdtemp(path.join(tmpdir(), "queue-devstack-bundle-"));
  try {
    await args.control.pause();
    let chain: string;
    const storeCopy = path.join(scratch, "queue.sqlite");
    try {
      // With the past states: a loaded stack can still trace, replay and reorg what happened before the save.
      chain = await jsonRpc<string>(args.rpcUrl, "anvil_dumpState", [true]).catch((error: unknown) => {
        throw new BundleError({ reason: `anvil did not dump its state: ${(error as Error).message}` });
      });
      if (args.fork) {
        // The manifest's contracts too, read or not (a loaded bundle's manifest is checked against their code).
        const named = manifestContracts(JSON.parse(await readFile(args.manifestPath, "utf8")) as DeploymentConfig);
        const reads = { ...args.fork.reads, accounts: new Set([...args.fork.reads.accounts, ...named]) };
        chain = encodeDump(await withForkedState(args.rpcUrl, decodeDump<AnvilState>(chain), reads));
      }
      args.control.backupStore(storeCopy);
    } finally {
      args.control.resume();
    }
    const patches = await readFile(path.join(path.dirname(args.manifestPath), PATCHES_FILE), "utf8").catch(() => null);
    const bundle: z.output<typeof Bundle> = {
      format: BUNDLE_FORMAT,
      version: BUNDLE_VERSION,
      createdAt: new Date().toISOString(),
      mode: args.fork ? "fork" : "local",
      fork: args.fork ? { blockNumber: args.fork.blockNumber, blockHash: args.fork.blockHash } : null,
      chain: Buffer.from(chain.slice(2), "hex").toString("base64"), // already gzip
      manifest: await readFile(args.manifestPath, "utf8"),
      store: gzipSync(JSON.stringify(readStoreRows(storeCopy))).toString("base64"),
      ...(patches === null ? {} : { patches }),
    };
    return gzipSync(JSON.stringify(bundle));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * What a bundle may hold, decompressed (a real local stack's: about 2 MB of chain in 56,000 JSON values,
 * a few KB of store, 15 KB of manifest). The caps leave room for a fork's touched state and a long
 * history, and bound what a hostile file can make us hold or write: a part is counted as it is
 * decompressed and stops at its cap; a JSON part's values are counted before it is parsed (its heap
 * grows with them, not with its bytes). Together they keep node under 512 MB whatever the file.
 */
export const BUNDLE_CAPS = {
  /** The file itself, as given (gzip). */
  file: 32 * 1024 * 1024,
  /** The file decompressed: its JSON, with the chain and store still gzip (base64). */
  envelope: 48 * 1024 * 1024,
  chain: 48 * 1024 * 1024,
  store: 32 * 1024 * 1024,
  manifest: 1024 * 1024,
} as const;

/** How many values a part may hold: JSON's (objects, arrays, elements: see parseJsonBounded), a version 1 store's (rows × columns). */
export const BUNDLE_VALUE_CAPS = { envelope: 1_000, chain: 500_000, store: 500_000 } as const;

/**
 * What anvil's dump must be, enough for --load-state to take it: its accounts and current block typed
 * as anvil's parser types them (hex strings, unsigned integers). Other fields are anvil's own to parse.
 */
const Hex = z.string().regex(/^0x[0-9a-fA-F]*$/);
const Quantity = z.union([z.int().nonnegative(), Hex]);
const AnvilDump = z.looseObject({
  block: z.looseObject({ number: Quantity, timestamp: Quantity, gas_limit: Quantity, basefee: Quantity, difficulty: Quantity, beneficiary: Hex }),
  accounts: z.record(Hex, z.looseObject({ nonce: z.int().nonnegative(), balance: Hex, code: Hex, storage: z.record(Hex, Hex) })),
  best_block_number: Quantity.optional(),
  blocks: z.array(z.looseObject({ header: z.record(z.string(), z.unknown()) })),
});

const STAGING_PREFIX = ".bundle-unpack-";

type UnpackTargets = { chainState: string; manifest: string; store: string };

/**
 * Checks a bundle and writes its chain, manifest and store into a state dir; refuses anything else,
 * writing nothing. A bundle is an untrusted file (it comes with a bug report, from anyone): every part
 * is decompressed with a cap, into a hidden folder of the state dir, and checked there — the chain as
 * anvil's dump, the manifest by parseManifest and against the runtime's constants and the chain's code,
 * the store's rows each validated and inserted into a fresh store of our schema — before any is renamed
 * into place. Every refusal is one BundleError naming the file and the part. Returns how many of its
 * operations are live (the stack holds them until the relayer is resumed). An aborted `signal` (a
 * Ctrl-C) stops it between parts or inside a part's decompression, writing nothing: it rejects with the
 * signal's reason, never a BundleError.
 */
export async function unpackBundle(file: string, files: UnpackTargets, stateDir: string, signal?: AbortSignal): Promise<{ mode: "local" | "fork"; live: number; failed: number }> {
  signal?.throwIfAborted();
  const bundle = await readEnvelope(file, signal);
  // A run killed while unpacking left its folder (no other stack runs from this state dir now).
  for (const entry of await readdir(stateDir)) if (entry.startsWith(STAGING_PREFIX)) await rm(path.join(stateDir, entry), { recursive: true, force: true });
  const staging = await mkdtemp(path.join(stateDir, STAGING_PREFIX));
  try {
    const staged = { chainState: path.join(staging, "chain-state.json"), manifest: path.join(staging, "manifest.json"), store: path.join(staging, "queue.sqlite") };
    let accounts: Record<string, { code: string; nonce: number }> = {};
    await part(file, "chain", signal, async () => {
      await gunzipBounded(Buffer.from(bundle.chain, "base64"), BUNDLE_CAPS.chain, staged.chainState, signal);
      accounts = checkChain(await readFile(staged.chainState)).accounts;
    });
    let manifest: DeploymentConfig | undefined;
    let live = 0;
    let failed = 0;
    await part(file, "manifest", signal, async () => {
      const bytes = Buffer.from(bundle.manifest, "utf8");
      if (bytes.length > BUNDLE_CAPS.manifest) throw new OverCapError(`is more than ${formatBytes(BUNDLE_CAPS.manifest)}`);
      const { parseManifest } = await import("../../src/server.ts");
      manifest = parseManifest(bytes);
      const differs = await manifestAgainstConstants(manifest, accounts, bundle.mode === "fork");
      if (differs !== null) throw new Error(`it does not describe this runtime and the bundle's chain: ${differs}`);
      await writeFile(staged.manifest, bytes);
    });
    await part(file, "store", signal, async () => {
      const rows = await storeRows(bundle, path.join(staging, "store-v1.sqlite"), signal);
      // The relayer's nonce in the bundle's chain (an account the dump lacks is a fresh one, nonce 0).
      const relayerNonce = Object.entries(accounts).find(([address]) => address.toLowerCase() === relayerAddress().toLowerCase())?.[1].nonce ?? 0;
      const settlement = await settleAttempts(rows, manifest as DeploymentConfig, relayerNonce);
      const settled = settlement.rows;
      failed = settlement.failed.length;
      writeFreshStore(staged.store, settled);
      live = settled.operations.filter((op) => !TERMINAL_STATES.has(op.state)).length;
    });
    // Checked against the chain once it runs (harness/patch); here, that they are the records a stack writes.
    await part(file, "patches", signal, async () => {
      if (bundle.patches === undefined) return;
      let records: unknown;
      try {
        records = JSON.parse(bundle.patches);
      } catch {
        throw new Error("it is not JSON");
      }
      const checked = PatchRecords.safeParse(records);
      if (!checked.success) throw new Error(`it is not the patch records a stack writes (${issuesOf(checked.error)})`);
    });
    // Checked: into place, unless given up meanwhile. The store may live outside the state dir (another filesystem).
    signal?.throwIfAborted();
    await rename(staged.chainState, files.chainState);
    await rename(staged.manifest, files.manifest);
    // Checked against the chain when the stack starts: a record the chain contradicts is refused.
    if (bundle.patches !== undefined) await writeFile(path.join(stateDir, PATCHES_FILE), bundle.patches);
    await rename(staged.store, files.store).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== "EXDEV") throw error;
      await copyFile(staged.store, files.store);
    });
    return { mode: bundle.mode, live, failed };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** The outer JSON, read with the file's and its decompression's caps, and its shape. */
async function readEnvelope(file: string, signal: AbortSignal | undefined): Promise<z.output<typeof Bundle>> {
  try {
    const stats = await stat(file);
    // A FIFO or a device would be read for ever (/dev/zero, a pipe nobody writes): its size means nothing.
    if (!stats.isFile()) throw new BundleError({ file, reason: "is not a regular file: a bundle is one" });
    const { size } = stats;
    if (size > BUNDLE_CAPS.file) throw new BundleError({ file, reason: `is ${size} bytes: a bundle may be at most ${formatBytes(BUNDLE_CAPS.file)}` });
    const json = (await gunzipBounded(createReadStream(file), BUNDLE_CAPS.envelope, null, signal)) as Buffer;
    const parsed = parseJsonBounded(json, BUNDLE_VALUE_CAPS.envelope) as { format?: unknown; version?: unknown };
    if (parsed?.format !== BUNDLE_FORMAT) throw new BundleError({ file, reason: "is not a queue-devstack bundle" });
    if (!READ_VERSIONS.has(parsed.version)) {
      const version = typeof parsed.version === "number" ? String(parsed.version) : JSON.stringify(parsed.version) ?? "none";
      throw new BundleError({ file, reason: `is a bundle of format version ${printable(version.slice(0, 40))}; this queue-devstack reads versions 1 and ${BUNDLE_VERSION}` });
    }
    const shaped = Bundle.safeParse(parsed);
    if (!shaped.success) throw new Error(`it is not a bundle's JSON (${issuesOf(shaped.error)})`);
    return shaped.data;
  } catch (error) {
    if (signal?.aborted) throw signal.reason; // given up, not refused
    if (error instanceof BundleError) throw error;
    const why = error instanceof OverCapError ? `it ${error.message}` : firstLine(error);
    throw new BundleError({ file, reason: `is not a readable bundle (damaged or truncated): ${why}` });
  }
}

/** Runs a part's unpacking and check; anything wrong is a BundleError naming the file and the part (an abort is not the part's fault). */
async function part(file: string, name: Exclude<BundlePart, "stack">, signal: AbortSignal | undefined, unpack: () => Promise<void>): Promise<void> {
  signal?.throwIfAborted();
  try {
    await unpack();
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    const why = error instanceof OverCapError ? `it ${error.message}` : (error as { code?: string }).code === "Z_DATA_ERROR" ? `it is not gzip (${firstLine(error)})` : firstLine(error);
    throw new BundleError({ file, part: name, reason: why });
  }
}

function checkChain(bytes: Uint8Array): z.output<typeof AnvilDump> {
  const json = parseJsonBounded(bytes, BUNDLE_VALUE_CAPS.chain);
  const parsed = AnvilDump.safeParse(json);
  if (!parsed.success) throw new Error(`it is not anvil's state dump (${issuesOf(parsed.error)})`);
  return parsed.data;
}

/** A schema's first issues, on one line (a ZodError's message is JSON over many). */
function issuesOf(error: z.ZodError): string {
  return error.issues.slice(0, 3).map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
}

/**
 * The store's rows, validated. Version 2 carries them as JSON; version 1 an SQLite file, unpacked into
 * the staging folder and only read (bundle-store.ts), never opened by the runtime.
 */
async function storeRows(bundle: z.output<typeof Bundle>, v1File: string, signal: AbortSignal | undefined): Promise<StoreRows> {
  const gzip = Buffer.from(bundle.store, "base64");
  if (bundle.version === 1) {
    await gunzipBounded(gzip, BUNDLE_CAPS.store, v1File, signal);
    return parseStoreRows(readStoreRows(v1File, BUNDLE_VALUE_CAPS.store));
  }
  const json = (await gunzipBounded(gzip, BUNDLE_CAPS.store, null, signal)) as Buffer;
  return parseStoreRows(parseJsonBounded(json, BUNDLE_VALUE_CAPS.store));
}

/** The contracts a manifest names (lower case, as the fork's reads are). */
function manifestContracts(manifest: DeploymentConfig): string[] {
  const adapters = manifest.routes.flatMap((route) => (route.action === "external" ? [route.adapter.address] : []));
  return [manifest.poolAddress, manifest.accountRegistry.address, manifest.receiveDirectory.address, manifest.queue.proof.verifier.address, ...manifest.assets.map((a) => a.address), ...adapters].map((a) => a.toLowerCase());
}

function firstLine(error: unknown): string {
  return printable(String((error as Error)?.message ?? error).split("\n")[0] as string);
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
