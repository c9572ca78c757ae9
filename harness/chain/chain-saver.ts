import { jsonRpc } from "./json-rpc.ts";
import { open, rename } from "node:fs/promises";
import { gunzipSync } from "node:zlib";

export interface ChainSaver {
  /** Dumps the chain now (if it changed since the last dump) and waits until it is on disk. */
  saveNow(): Promise<void>;
  /** Stops watching, after a dump in progress and, with finalSave, one last dump. */
  stop(options?: { finalSave?: boolean }): Promise<void>;
}

/**
 * Keeps a persisted stack's chain on disk while it runs, so that a crash of anvil or of its owner loses
 * at most the last moments: the head is watched, and on every change the chain is dumped with
 * `anvil_dumpState` and written atomically (temp file, fsync, rename), never half-written, and once more
 * when the stack stops. This covers a crash of anvil itself; anvil's own --dump-state covers its owner's
 * death (the orphan guard stops it with SIGTERM). anvil's --state-interval is not used: it writes in
 * place, and a crash during a write would leave a damaged file.
 */
export function startChainSaver(args: { rpcUrl: string; file: string; intervalMs?: number; onError?: (error: Error) => void }): ChainSaver {
  let lastDump = "";
  let lastHead = "";
  let chain: Promise<void> = Promise.resolve();
  let stopped = false;

  const rpc = <T>(method: string) => jsonRpc<T>(args.rpcUrl, method, [], { timeoutMs: 10_000 });

  async function dump(): Promise<void> {
    const hex = await rpc<string>("anvil_dumpState");
    if (hex === lastDump) return;
    const json = gunzipSync(Buffer.from(hex.slice(2), "hex"));
    const tmp = `${args.file}.${process.pid}.tmp`;
    const handle = await open(tmp, "w");
    try {
      await handle.writeFile(json);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, args.file);
    lastDump = hex;
  }

  /** Runs one step after the previous one: dumps never overlap. */
  const serial = (step: () => Promise<void>): Promise<void> => (chain = chain.then(step, step));

  // A new block is dumped at once; changes without a block (anvil_setBalance, say) within a few ticks.
  let ticks = 0;
  const timer = setInterval(() => {
    void serial(async () => {
      if (stopped) return;
      const head = await rpc<string>("eth_blockNumber");
      if (head === lastHead && ++ticks % 20 !== 0) return;
      await dump();
      lastHead = head;
    }).catch((error: Error) => args.onError?.(error));
  }, args.intervalMs ?? 100);
  timer.unref();

  return {
    saveNow: () => serial(dump),
    async stop(options = {}) {
      stopped = true;
      clearInterval(timer);
      if (options.finalSave) await serial(dump).catch((error: Error) => args.onError?.(error));
      await chain.catch(() => {});
    },
  };
}
