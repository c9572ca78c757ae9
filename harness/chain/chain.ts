import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createConnection } from "node:net";
import path from "node:path";
import { createAnvil } from "@viem/anvil";
import { getAddress, type Hex } from "viem";
import { redactText } from "../../src/redact.ts";
import { anvilBinaryPath } from "./anvil-binary.ts";
import { guardedCommand } from "../process/index.ts";
import { childProcesses } from "../process/index.ts";
import { QueueDevstackError } from "../../src/errors/index.ts";

export const CHAIN_ID = 11155111;

/** Prefix of the private folder, inside the state dir, that holds anvil's --config-out for an instant. */
export const ANVIL_RUN_DIR_PREFIX = ".anvil-";

export interface ChainOptions {
  host: string;
  /** 0 picks a free port (read back from anvil's "Listening on" line). */
  port: number;
  /** The stack's state dir: anvil's command line carries a path inside it, which identifies the process. */
  stateDir: string;
  /** Fork this RPC (a URL without credentials: see harness/chain/rpc-forwarder.ts) at a pinned block. */
  fork?: { url: string; blockNumber: bigint } | undefined;
  /** anvil --load-state: start from this saved chain. */
  loadState?: string | undefined;
  /** anvil --dump-state: write the chain there when anvil is stopped gracefully (SIGTERM), also by the orphan guard. */
  dumpState?: string | undefined;
  /** Seconds between blocks; undefined = automine (a block per transaction). */
  blockTime?: number | undefined;
  /** anvil --timestamp: the genesis block's timestamp (default: now). */
  timestamp?: bigint | undefined;
  /**
   * Called with anvil's unique command-line marker just before it is spawned, and again with its PID
   * once known, so the caller can record both: a run killed at any step leaves a findable anvil.
   */
  onProcess?: (process: { marker: string; pid: number | null }) => Promise<void>;
  /**
   * Called once anvil is spawned, while it boots (tens of milliseconds in which this process would wait):
   * the caller does there what needs no chain.
   */
  onBooting?: () => void;
  /**
   * Gives up the start: an anvil still starting (loading a big state, say) is killed, and startChain
   * rejects with the signal's reason. Once anvil is up the signal is let go: stop() stops it.
   */
  signal?: AbortSignal | undefined;
}

export interface DevAccount {
  address: Hex;
  privateKey: Hex;
}

export interface Chain {
  rpcUrl: string;
  port: number;
  pid: number;
  binary: string;
  /** A path unique to this anvil in its command line: with the PID, how a leftover is recognised. */
  marker: string;
  /** anvil's funded accounts, in its order (the default test mnemonic). */
  accounts: DevAccount[];
  /** anvil's last output lines (it logs every RPC method and transaction): for a failing test's report. */
  recentLogs(): string[];
  /** Stops anvil: gracefully (SIGTERM: it writes --dump-state), or with `graceful: false` at once, writing nothing. */
  stop(options?: { graceful?: boolean }): Promise<void>;
  /**
   * Why a step that needed anvil failed, when the reason is that anvil is gone: an AnvilExitedError if
   * it exited on its own (or is exiting: its port refuses connections), undefined while it runs.
   */
  exitError(during: string, cause?: unknown): Promise<AnvilExitedError | undefined>;
}

export class ChainStartError extends QueueDevstackError {
  override name = "ChainStartError";
  readonly code = "chain_start_failed";
}

/**
 * anvil exited on its own after it had started (killed, crashed, out of memory): said in these words,
 * with how it ended and its last lines, rather than as the RPC's "connection refused" that follows.
 */
export class AnvilExitedError extends QueueDevstackError {
  override name = "AnvilExitedError";
  readonly code = "anvil_exited";
  readonly pid: number | undefined;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly lastLines: string[];

  constructor(args: { pid: number | undefined; exitCode: number | null; signal: string | null; lastLines: string[]; during: string }, options?: ErrorOptions) {
    const how = args.signal !== null ? `killed by ${args.signal}` : `exit code ${args.exitCode ?? "unknown"}`;
    const lines = args.lastLines.length > 0 ? `; its last lines:\n${args.lastLines.map((l) => `  ${l}`).join("\n")}` : "; it printed nothing";
    super(`anvil${args.pid === undefined ? "" : ` (pid ${args.pid})`} exited ${args.during} (${how})${lines}`, options);
    this.pid = args.pid;
    this.exitCode = args.exitCode;
    this.signal = args.signal;
    this.lastLines = args.lastLines;
  }
}

/** How many of anvil's last lines an AnvilExitedError carries. */
const EXIT_LINES = 10;

/** Starts anvil (local, or forking an upstream at a pinned block) with chain id 11155111. */
export async function startChain(options: ChainOptions): Promise<Chain> {
  options.signal?.throwIfAborted();
  const binary = anvilBinaryPath();
  // anvil's --config-out holds every private key and the fork URL. It goes to a private (0700) folder
  // that is read and removed as soon as anvil is up; its path stays in anvil's command line as the marker.
  const runDir = await mkdtemp(path.join(path.resolve(options.stateDir), ANVIL_RUN_DIR_PREFIX));
  const marker = path.join(runDir, "accounts.json");
  const anvil = createAnvil({
    anvilBinary: binary,
    host: options.host,
    port: options.port,
    chainId: CHAIN_ID,
    forkUrl: options.fork?.url,
    forkBlockNumber: options.fork === undefined ? undefined : Number(options.fork.blockNumber),
    // Every upstream read goes through the stack's forwarder (its cache, and what a fork bundle captures),
    // never answered from anvil's own disk cache.
    noStorageCaching: options.fork === undefined ? undefined : true,
    blockTime: options.blockTime,
    timestamp: options.timestamp === undefined ? undefined : Number(options.timestamp),
    loadState: options.loadState,
    dumpState: options.dumpState,
    configOut: marker,
    startTimeout: 30_000,
    stopTimeout: 10_000,
    // Spawned so that it dies with us, even on SIGKILL (where the platform allows).
    execArgs: ([file, args, execaOptions]) => {
      const guarded = guardedCommand(file, args ?? []);
      return [guarded.file, guarded.args, execaOptions];
    },
  });
  let exited: { code: number | null; signal: string | null } | undefined;
  const exit = new Promise<void>((resolve) =>
    anvil.on("exit", (code?: number, signal?: string) => {
      exited = { code: code ?? null, signal: signal ?? null };
      resolve();
    }),
  );
  let pid: number | undefined;
  let port = options.port;
  let stopping = false;
  const recentLogs = () => anvil.logs.join("").split("\n").filter((line) => line.trim() !== "").slice(-40);
  const exitError = async (during: string, cause?: unknown): Promise<AnvilExitedError | undefined> => {
    if (stopping) return undefined;
    // A refused connection means anvil closed its socket: it is exiting, and its exit is reported soon.
    if (!exited && port !== 0 && (await refusesConnections(options.host, port))) await Promise.race([exit, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
    const status = exited as { code: number | null; signal: string | null } | undefined;
    if (!status) return undefined;
    const lastLines = recentLogs().slice(-EXIT_LINES).map((line) => redactText(line, options.fork?.url));
    return new AnvilExitedError({ pid, exitCode: status.code, signal: status.signal, lastLines, during }, { cause });
  };
  // Stopped by PID rather than @viem/anvil's stop(), which waits for a "close" already past when anvil
  // died on its own, and leaves a 10 s timer that keeps the owner's process alive after the stop.
  const stop = async ({ graceful = true } = {}): Promise<void> => {
    stopping = true;
    if (exited) return;
    if (pid === undefined) return anvil.stop();
    process.kill(pid, graceful ? "SIGTERM" : "SIGKILL");
    const grace = new Promise<void>((resolve) => setTimeout(resolve, 10_000).unref());
    await Promise.race([exit, grace]);
    if (!exited) process.kill(pid, "SIGKILL");
    await exit;
  };
  // Given up while anvil starts (loading a big state, say): it is killed, found by its marker (execa's own
  // signal would leave its promise rejected unhandled), and its start fails at once. Spawned too late to
  // be found, it is stopped once up, below.
  const onAbort = () => void findAnvilPid(marker).then((found) => process.kill(found, "SIGKILL")).catch(() => {});
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    await options.onProcess?.({ marker, pid: null });
    options.signal?.throwIfAborted();
    const listening = anvil.start();
    // @viem/anvil spawns it as soon as its import of execa resolves, within this turn of the event loop.
    if (options.onBooting) setImmediate(options.onBooting);
    await listening;
  } catch (error) {
    await rm(runDir, { recursive: true, force: true });
    if (options.signal?.aborted) throw options.signal.reason;
    const log = anvil.logs.join("").trim().split("\n").slice(-3).join(" | ");
    throw new ChainStartError(redactText(`anvil did not start: ${(error as Error).message}${log ? ` (${log})` : ""}`, options.fork?.url));
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
  try {
    port = listeningPort(anvil.logs.join(""));
    pid = await findAnvilPid(marker);
    options.signal?.throwIfAborted();
    await options.onProcess?.({ marker, pid });
    const out = JSON.parse(await readFile(marker, "utf8")) as { available_accounts: Hex[]; private_keys: Hex[] };
    const accounts = out.available_accounts.map((address, i) => ({ address: getAddress(address), privateKey: out.private_keys[i] as Hex }));
    return {
      rpcUrl: `http://${options.host}:${port}`,
      port,
      pid,
      binary,
      marker,
      accounts,
      recentLogs,
      stop,
      exitError,
    };
  } catch (error) {
    const aborted = options.signal?.aborted === true;
    const gone = aborted ? undefined : await exitError("while it was starting", error);
    await stop({ graceful: false });
    throw aborted ? options.signal?.reason : (gone ?? error);
  } finally {
    await rm(runDir, { recursive: true, force: true });
  }
}

/** Whether a TCP connection to host:port is refused (nothing listens there). */
function refusesConnections(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    socket.once("connect", () => (socket.destroy(), resolve(false)));
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}

function listeningPort(logs: string): number {
  const match = /Listening on \S+:(\d+)/.exec(logs);
  if (!match) throw new ChainStartError("anvil started but did not print its listening address");
  return Number(match[1]);
}

/** Our own child whose command line carries this anvil's unique marker. */
async function findAnvilPid(marker: string): Promise<number> {
  const mine = (await childProcesses()).filter((p) => p.args.includes(marker));
  if (mine.length !== 1) throw new ChainStartError(`expected one anvil child with ${marker}, found ${mine.length}`);
  return (mine[0] as { pid: number }).pid;
}
