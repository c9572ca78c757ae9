import { createHash } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";

/**
 * The fork's RPC cache: answers of the fork upstream that can never change — state read at an explicit
 * block number or hash, blocks, mined transactions and receipts, the chain id — kept in a file per
 * upstream, so a second run of a fork at the same pinned block needs no network for what it already
 * read. The upstream is always asked first (a reset upstream never gets stale answers); the cache
 * answers only when it cannot be reached. Answers about "latest" (or any moving tag) are never kept.
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
  if (!IMMUTABLE.has(call.method)) return false;
  return !JSON.stringify(call.params ?? []).split('"').some((token) => MOVING_TAGS.has(token));
}

const keyOf = (call: Call) => JSON.stringify([call.method, call.params ?? []]);

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
      if (!cacheable(call) || result === null || result === undefined) return;
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
