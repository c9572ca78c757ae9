import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { createAnvil } from "@viem/anvil";
import { getAddress, type Hex } from "viem";
import { redactText } from "../src/redact.ts";
import { anvilBinaryPath } from "./anvil-binary.ts";
import { listProcesses } from "./processes.ts";

export const CHAIN_ID = 11155111;

export interface ChainOptions {
  host: string;
  /** 0 picks a free port (read back from anvil's "Listening on" line). */
  port: number;
  /** Holds anvil's --config-out file, which also makes its command line unique for PID lookup. */
  stateDir: string;
  fork?: { url: string; blockNumber: bigint } | undefined;
  /** anvil --state: load the chain from this file if it exists, save it there on a graceful stop. */
  stateFile?: string | undefined;
  /** Seconds between blocks; undefined = automine (a block per transaction). */
  blockTime?: number | undefined;
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
  configOut: string;
  /** anvil's funded accounts, in its order (the default test mnemonic). */
  accounts: DevAccount[];
  stop(): Promise<void>;
}

export class ChainStartError extends Error {
  override name = "ChainStartError";
}

/** Starts anvil (local, or forking an upstream at a pinned block) with chain id 11155111. */
export async function startChain(options: ChainOptions): Promise<Chain> {
  await mkdir(options.stateDir, { recursive: true });
  const binary = anvilBinaryPath();
  const configOut = path.resolve(options.stateDir, "anvil-accounts.json");
  const anvil = createAnvil({
    anvilBinary: binary,
    host: options.host,
    port: options.port,
    chainId: CHAIN_ID,
    forkUrl: options.fork?.url,
    forkBlockNumber: options.fork === undefined ? undefined : Number(options.fork.blockNumber),
    blockTime: options.blockTime,
    state: options.stateFile,
    configOut,
    startTimeout: 30_000,
    stopTimeout: 10_000,
  });
  try {
    await anvil.start();
  } catch (error) {
    const log = anvil.logs.join("").trim().split("\n").slice(-3).join(" | ");
    throw new ChainStartError(redactText(`anvil did not start: ${(error as Error).message}${log ? ` (${log})` : ""}`, options.fork?.url));
  }
  try {
    const port = listeningPort(anvil.logs.join(""));
    const pid = await findAnvilPid(configOut);
    const out = JSON.parse(await readFile(configOut, "utf8")) as { available_accounts: Hex[]; private_keys: Hex[] };
    const accounts = out.available_accounts.map((address, i) => ({ address: getAddress(address), privateKey: out.private_keys[i] as Hex }));
    return {
      rpcUrl: `http://${options.host}:${port}`,
      port,
      pid,
      binary,
      configOut,
      accounts,
      stop: () => anvil.stop(),
    };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}

function listeningPort(logs: string): number {
  const match = /Listening on \S+:(\d+)/.exec(logs);
  if (!match) throw new ChainStartError("anvil started but did not print its listening address");
  return Number(match[1]);
}

/** Our own child whose command line carries this stack's unique --config-out path. */
async function findAnvilPid(configOut: string): Promise<number> {
  const mine = (await listProcesses()).filter((p) => p.ppid === process.pid && p.args.includes(configOut));
  if (mine.length !== 1) throw new ChainStartError(`expected one anvil child with ${configOut}, found ${mine.length}`);
  return (mine[0] as { pid: number }).pid;
}
