import { createHash } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";

/**
 * The fork's RPC cache: answers of the fork upstream that can never change — state read at an explicit
 * block number or hash, blocks, mined transactions and receipts, the logs of past blocks, the chain id —
 * kept in a file per upstream, so a second run of a fork at the same pinned block needs no network for
 * what it already read. The upstream is always asked first (a reset upstream never gets stale answers);
 * the cache answers only when it cannot be reached. Answers about "latest" (or any moving tag) are never kept.
 */
export const DEFAULT_FORK_CACHE_DIR = path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), ".cache"), "queue-devstack", "fork-rpc");

const IMMUTABLE = new Set([
  "eth_chainId",
  "net_version",
  "eth_getBlockByNumber",
  "eth_getBlockByHash",
  "eth_getAccountInfo",
  "eth_getBalance",
  "eth_getTransactionCount",
  "eth_getCode",
  "eth_getStorageAt",
  "eth_getTransactionByHash",
  "eth_getTransactionReceipt",
]);
const MOVING_TAGS = new Set(["latest", "pending", "safe", "finalized", "earliest"]);

interface Call {
  method: string;
  params?: unknown[];
}

/** A call whose answer cannot change: an immutable method with no moving block tag anywhere in its params. */
function cacheable(call: Call): boolean {
  if (call.method === "eth_getLogs") return logsFilter(call) !== null;
  if (!IMMUTABLE.has(call.method)) return false;
  return !JSON.stringify(call.params ?? []).split('"').some((token) => MOVING_TAGS.has(token));
}

interface LogsFilter {
  address?: string | string[];
  topics?: Array<string | string[] | null>;
  fromBlock?: string;
  toBlock?: string;
  blockHash?: string;
}

const HEX_NUMBER = /^0x[0-9a-fA-F]+$/;

/**
 * An eth_getLogs filter over past blocks only: one block hash, or a range of explicit numbers (never a
 * tag, nor a missing bound, which means "latest"). anvil asks the upstream for the forked part of any
 * query this way: up to the fork block, by number.
 */
function logsFilter(call: Call): LogsFilter | null {
  const [filter, ...rest] = call.params ?? [];
  if (rest.length > 0 || typeof filter !== "object" || filter === null) return null;
  const f = filter as LogsFilter;
  if (typeof f.blockHash === "string") return f.fromBlock === undefined && f.toBlock === undefined ? f : null;
  return typeof f.fromBlock === "string" && HEX_NUMBER.test(f.fromBlock) && typeof f.toBlock === "string" && HEX_NUMBER.test(f.toBlock) ? f : null;
}

/**
 * A filter's key, the same for every way of writing it: anvil lists a topic's alternatives in no fixed
 * order (a set, from one run to the next), and numbers and addresses may be written in either case.
 */
function logsKey(filter: LogsFilter): unknown {
  const lower = (value: string | string[] | null | undefined) => (Array.isArray(value) ? [...new Set(value.map((v) => v.toLowerCase()))].sort() : (value?.toLowerCase() ?? null));
  const topics = (filter.topics ?? []).map(lower);
  while (topics.length > 0 && topics.at(-1) === null) topics.pop(); // a trailing null matches anything, as no topic at all
  return filter.blockHash !== undefined
    ? { address: lower(filter.address), topics, blockHash: filter.blockHash.toLowerCase() }
    : { address: lower(filter.address), topics, fromBlock: BigInt(filter.fromBlock as string).toString(), toBlock: BigInt(filter.toBlock as string).toString() };
}

const keyOf = (call: Call) => {
  const filter = call.method === "eth_getLogs" ? logsFilter(call) : null;
  return JSON.stringify([call.method, filter ? [logsKey(filter)] : (call.params ?? [])]);
};

/** A block the upstream has answered for (by number, with or without its transactions): it exists there. */
function holdsBlock(entries: Map<string, unknown>, number: bigint): boolean {
  const hex = `0x${number.toString(16)}`;
  return [false, true].some((full) => entries.has(keyOf({ method: "eth_getBlockByNumber", params: [hex, full] })));
}

/**
 * A range's logs are final once its last block exists upstream: asked past the upstream's head, it would
 * answer the logs so far, and more later. anvil asks for the fork block itself before any logs.
 */
function settled(call: Call, entries: Map<string, unknown>): boolean {
  const filter = call.method === "eth_getLogs" ? logsFilter(call) : null;
  return filter === null || filter.blockHash !== undefined || holdsBlock(entries, BigInt(filter.toBlock as string));
}

/**
 * anvil reads an account either whole (eth_getAccountInfo) or in parts (balance, nonce, code), and may
 * switch between the two from one run to the next: one kept form answers the other.
 */
const PARTS = { eth_getBalance: "balance", eth_getTransactionCount: "nonce", eth_getCode: "code" } as const;
function accountPart(call: Call, entries: Map<string, unknown>): unknown {
  const [address, block] = call.params ?? [];
  if (call.method === "eth_getAccountInfo") {
    const parts = Object.entries(PARTS).map(([method, field]) => [field, entries.get(keyOf({ method, params: [address, block] }))] as const);
    return parts.every(([, value]) => value !== undefined) ? Object.fromEntries(parts) : undefined;
  }
  const field = PARTS[call.method as keyof typeof PARTS];
  if (!field) return undefined;
  const info = entries.get(keyOf({ method: "eth_getAccountInfo", params: [address, block] })) as Record<string, unknown> | undefined;
  return info?.[field];
}

export interface RpcCache {
  file: string;
  /** The cached answer of a call, if any. */
  get(call: Call): unknown;
  /** Keeps the answer of a cacheable call (others are ignored); written to disk soon after. */
  put(call: Call, result: unknown): void;
  isCacheable(call: Call): boolean;
  flush(): Promise<void>;
}

/** The cache of one upstream: its file is named by a hash of the URL without credentials. */
export async function openRpcCache(dir: string, displayUrl: string): Promise<RpcCache> {
  const file = path.join(dir, `${createHash("sha256").update(displayUrl).digest("hex").slice(0, 16)}.json`);
  const entries = new Map<string, unknown>();
  try {
    for (const [key, value] of Object.entries(JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>)) entries.set(key, value);
  } catch {
    /* none yet, or unreadable: start empty */
  }
  let dirty = false;
  let writing: Promise<void> = Promise.resolve();
  const flush = () => {
    writing = writing.then(async () => {
      if (!dirty) return;
      dirty = false;
      await mkdir(dir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      await writeFile(tmp, JSON.stringify(Object.fromEntries(entries)));
      await rename(tmp, file);
    });
    return writing;
  };
  let timer: NodeJS.Timeout | undefined;
  return {
    file,
    isCacheable: cacheable,
    get: (call) => (cacheable(call) ? (entries.get(keyOf(call)) ?? accountPart(call, entries)) : undefined),
    put(call, result) {
      if (!cacheable(call) || result === null || result === undefined || !settled(call, entries)) return;
      entries.set(keyOf(call), result);
      dirty = true;
      timer ??= setTimeout(() => {
        timer = undefined;
        void flush().catch(() => {});
      }, 200);
    },
    async flush() {
      clearTimeout(timer);
      timer = undefined;
      await flush();
    },
  };
}
