import { access, mkdtemp, readFile, rm } from "node:fs/promises";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import path from "node:path";
import type { FastifyInstance } from "fastify";
import type { Address, Hex, PublicClient } from "viem";
import { createChainClient } from "../src/chain/client.ts";
import type { DeploymentConfig } from "../src/config/deployment-config.ts";
import { buildQueueRuntime, parseManifest } from "../src/server.ts";
import { verifyDeployment } from "../src/chain/verify-deployment.ts";
import type { RelaySettings } from "../src/relay/settings.ts";
import { startChain, type Chain, type DevAccount } from "./chain.ts";
import { CIRCUIT_BUILD_DIR, loadCircuitManifest } from "./circuit.ts";
import { deployFixtures } from "./deploy.ts";
import { loadFixtures } from "./fixtures.ts";
import { resolveForkPoint, type ForkPoint } from "./fork.ts";
import { reclaimStateDir, StackAlreadyRunningError, type LeftoverReport } from "./leftovers.ts";
import { describeDeployment, manifestBytes, writeFileAtomic } from "./manifest.ts";
import { pinPool } from "./pin.ts";
import { commandLineOf } from "./processes.ts";
import { timed, type ProgressListener } from "./progress.ts";
import { StackInfo } from "./stack-info.ts";

export interface DevStackOptions {
  /** Interface for anvil and the queue runtime. Loopback by default. */
  host?: string;
  /** anvil's port; 0 (the library default) picks a free one. */
  chainPort?: number;
  /** The queue runtime's port; 0 (the library default) picks a free one. */
  queuePort?: number;
  /** Where manifest.json and stack.json go. Default: a fresh temp dir, removed by stop(). */
  stateDir?: string;
  /** Fork this RPC (it must be Sepolia) instead of starting an empty chain. */
  forkUrl?: string;
  /** Fork at this block; default: the upstream's latest, resolved once and pinned. */
  forkBlockNumber?: bigint | number;
  /** Pin this existing Pool (fork mode) instead of deploying the fixtures. */
  pool?: string;
  /** The pinned Pool's deployment block; default: found on the chain. */
  deploymentBlock?: bigint | number;
  /** Called after each start-up step, with its duration. */
  onProgress?: ProgressListener;
  /**
   * Save the chain in `<stateDir>/chain-state.json` when the stack stops, and resume from it (same
   * blocks, same Pool, same manifest, same operation store) when it starts again. Local mode only: a
   * fork is reproduced by its pinned block.
   */
  persist?: boolean;
  /** Relayer behaviour (confirmations, fee cap, timings); defaults suit a dev chain. */
  relay?: Partial<RelaySettings>;
  /** The operation store: default `<stateDir>/queue.sqlite` (durable); ":memory:" for tests that want it. */
  store?: string;
  /** Fastify logger option for the runtime (default: off). */
  logger?: boolean | { level: string };
}

export interface DevStack {
  mode: "local" | "fork";
  rpcUrl: string;
  queueUrl: string;
  manifest: DeploymentConfig;
  manifestPath: string;
  stackInfoPath: string;
  stateDir: string;
  info: StackInfo;
  /** Funded accounts with their keys (anvil's well-known test keys), relayer excluded. */
  accounts: DevAccount[];
  relayer: { address: Address };
  /** anvil's PID. */
  chainPid: number;
  fork: ForkPoint | null;
  /** A stack left in the state dir by a killed run, and what was done about it. */
  leftover: LeftoverReport;
  stop(): Promise<void>;
}

/** State dirs of the stacks running in this process (stack.json alone cannot tell them apart: same PID). */
const liveStateDirs = new Set<string>();

/** Dev accounts by anvil index: 0 deploys, 1 relays, the rest are for apps and tests. */
const DEPLOYER_INDEX = 0;
const RELAYER_INDEX = 1;

/**
 * Starts a complete throwaway stack: anvil (local or fork), the Pool deployed or pinned, the manifest,
 * and the queue runtime. Whatever was started is stopped again if a later step fails.
 */
export async function startDevStack(options: DevStackOptions = {}): Promise<DevStack> {
  const host = options.host ?? "127.0.0.1";
  const progress = options.onProgress;
  const ownsStateDir = options.stateDir === undefined;
  const stateDir = path.resolve(options.stateDir ?? (await mkdtemp(path.join(tmpdir(), "devstack-"))));
  const manifestPath = path.join(stateDir, "manifest.json");
  const stackInfoPath = path.join(stateDir, "stack.json");
  if (options.pool !== undefined && options.forkUrl === undefined) {
    throw new Error("--pool pins an existing Pool on a fork: it needs --fork-url");
  }
  if (options.persist && (ownsStateDir || options.forkUrl !== undefined)) {
    throw new Error("persist saves a local stack in its state dir: it needs a stateDir and no fork (a fork is reproduced by its pinned block)");
  }
  const chainStateFile = options.persist ? path.join(stateDir, "chain-state.json") : undefined;
  const resume = chainStateFile !== undefined && (await exists(chainStateFile)) && (await exists(manifestPath));

  if (liveStateDirs.has(stateDir)) {
    throw new StackAlreadyRunningError(`a stack is already running from ${stateDir} in this process; stop it, or choose another stateDir`);
  }
  liveStateDirs.add(stateDir);
  const cleanups: Array<() => Promise<unknown>> = [async () => liveStateDirs.delete(stateDir)];
  const stopAll = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  };
  if (ownsStateDir) cleanups.push(() => rm(stateDir, { recursive: true, force: true }));

  try {
    const leftover = await timed(progress, "check state dir", () => reclaimStateDir(stateDir), (r) =>
      r.found ? (r.stoppedAnvilPid ? `stopped anvil pid ${r.stoppedAnvilPid} left by a killed run` : "removed a stale stack.json") : undefined,
    );
    // A run that does not resume starts a new chain: operations stored by an earlier run belong to a
    // chain that is gone.
    if (options.store === undefined && !resume) {
      await Promise.all(["", "-wal", "-shm"].map((suffix) => rm(path.join(stateDir, `queue.sqlite${suffix}`), { force: true })));
    }
    const fork =
      options.forkUrl === undefined
        ? null
        : await timed(progress, "resolve fork point", () => resolveForkPoint(options.forkUrl as string, toBigInt(options.forkBlockNumber)), (f) =>
            `${f.displayUrl} at block ${f.blockNumber}`,
          );
    const fixturesPromise = loadFixtures((reason) => progress?.({ step: `contracts ${reason}: compiling`, ms: 0 }));
    fixturesPromise.catch(() => {}); // awaited below; avoid an unhandled rejection while anvil starts

    const chain: Chain = await timed(progress, fork ? "start anvil (fork)" : "start anvil", () =>
      startChain({ host, port: options.chainPort ?? 0, stateDir, fork: fork ?? undefined, stateFile: chainStateFile }),
    );
    cleanups.push(() => chain.stop());
    const client = createChainClient(chain.rpcUrl);
    const [fixtures, circuit] = await timed(progress, "load contracts", () => Promise.all([fixturesPromise, loadCircuitManifest()]));
    const relayer = chain.accounts[RELAYER_INDEX] as DevAccount;
    const deployer = chain.accounts[DEPLOYER_INDEX] as DevAccount;

    const { pool, deploymentBlock } = resume
      ? await timed(progress, "resume saved chain", () => resumeDeployment(client, manifestPath), (d) => `Pool ${d.pool} from ${chainStateFile}`)
      : options.pool === undefined
        ? await timed(progress, "deploy fixtures", async () => {
            const deployment = await deployFixtures({
              client,
              fixtures,
              deployerKey: deployer.privateKey,
              holders: chain.accounts.map((a) => a.address),
              levels: circuit.levels,
            });
            return { pool: deployment.pool, deploymentBlock: deployment.deploymentBlock };
          })
        : await timed(progress, "pin pool", () =>
            pinPool({ client, pool: options.pool as string, atBlock: (fork as ForkPoint).blockNumber, deploymentBlock: toBigInt(options.deploymentBlock) }),
          );

    const manifest = await timed(progress, "write manifest", async () => {
      const config = await describeDeployment({ client, pool, deploymentBlock, fixtures, circuit, relayer: relayer.address });
      await writeFileAtomic(manifestPath, manifestBytes(config));
      return config;
    });

    const app: FastifyInstance = await timed(progress, "start queue runtime", async () => {
      const runtime = await buildQueueRuntime({
        manifest: manifestBytes(manifest),
        rpcUrl: chain.rpcUrl,
        explorerUrl: fork ? "https://sepolia.etherscan.io" : null,
        relayerPrivateKey: relayer.privateKey,
        artifactsDir: CIRCUIT_BUILD_DIR,
        store: options.store ?? path.join(stateDir, "queue.sqlite"),
        ...(options.relay ? { relay: options.relay } : {}),
        logger: options.logger ?? false,
      });
      cleanups.push(() => runtime.close());
      await runtime.listen({ host, port: options.queuePort ?? 0 });
      return runtime;
    });
    const address = app.server.address();
    const queuePort = typeof address === "object" && address !== null ? address.port : 0;
    const queueUrl = `http://${host}:${queuePort}`;

    const accounts = chain.accounts.filter((_, i) => i !== RELAYER_INDEX);
    const info = StackInfo.parse({
      version: 1,
      mode: fork ? "fork" : "local",
      pool: options.pool === undefined ? "deployed" : "pinned",
      chainId: manifest.chainId,
      rpcUrl: chain.rpcUrl,
      queueUrl,
      fork: fork ? { url: fork.displayUrl, blockNumber: Number(fork.blockNumber), blockHash: fork.blockHash } : null,
      stateDir,
      manifestPath,
      chainState: chainStateFile ?? null,
      poolAddress: manifest.poolAddress,
      relayer: { address: relayer.address },
      devAccounts: accounts.map((a) => ({ ...a, role: a === deployer ? "deployer" : "dev" })),
      processes: {
        // Its command line may carry --fork-url with credentials: only a hash of it is stored.
        owner: { pid: process.pid, commandSha256: sha256((await commandLineOf(process.pid)) ?? "") },
        anvil: { pid: chain.pid, marker: chain.configOut },
      },
      startedAt: new Date().toISOString(),
    });
    await writeFileAtomic(stackInfoPath, `${JSON.stringify(info, null, 2)}\n`);
    cleanups.splice(ownsStateDir ? 2 : 1, 0, () => rm(stackInfoPath, { force: true }));

    let stopping: Promise<void> | undefined;
    return {
      mode: fork ? "fork" : "local",
      rpcUrl: chain.rpcUrl,
      queueUrl,
      manifest,
      manifestPath,
      stackInfoPath,
      stateDir,
      info,
      accounts,
      relayer: { address: relayer.address },
      chainPid: chain.pid,
      fork,
      leftover,
      stop: () => (stopping ??= stopAll()),
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** A saved stack's Pool, checked against the chain it was saved with. */
async function resumeDeployment(client: PublicClient, manifestPath: string): Promise<{ pool: Address; deploymentBlock: bigint }> {
  const saved = parseManifest(await readFile(manifestPath));
  try {
    await verifyDeployment(client, saved);
  } catch (error) {
    throw new Error(`the saved chain does not hold the saved manifest's Pool (${(error as Error).message}); remove ${path.dirname(manifestPath)} to start afresh`);
  }
  return { pool: saved.poolAddress as Address, deploymentBlock: BigInt(saved.deploymentBlock) };
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function toBigInt(value: bigint | number | undefined): bigint | undefined {
  return value === undefined ? undefined : BigInt(value);
}

export type { DevAccount, Hex };
