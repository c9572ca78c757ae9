import { access, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { FastifyInstance, FastifyServerOptions } from "fastify";
import type { Address, Hex, PublicClient } from "viem";
import { createChainClient } from "../src/chain/client.ts";
import type { DeploymentConfig } from "../src/config/deployment-config.ts";
import { buildQueueRuntime, parseManifest, type QueueRuntimeOptions } from "../src/server.ts";
import { verifyDeployment } from "../src/chain/verify-deployment.ts";
import type { RelaySettings } from "../src/relay/settings.ts";
import { startChain, type Chain, type DevAccount } from "./chain.ts";
import { startChainSaver, type ChainSaver } from "./chain-saver.ts";
import { CIRCUIT_BUILD_DIR, loadCircuitManifest } from "./circuit.ts";
import { deployFixtures } from "./deploy.ts";
import { loadFixtures } from "./fixtures.ts";
import { GENESIS_STATE_PATH, loadGenesis } from "./genesis.ts";
import { resolveForkPoint, type ForkPoint } from "./fork.ts";
import {
  currentOwner,
  processRecordPath,
  reclaimStateDir,
  StackAlreadyRunningError,
  sweepAbandonedTempStacks,
  TEMP_STATE_DIR_PREFIX,
  writeProcessRecord,
  type LeftoverReport,
} from "./leftovers.ts";
import { describeDeployment, manifestBytes, writeFileAtomic } from "./manifest.ts";
import { pinPool } from "./pin.ts";
import { timed, type ProgressListener } from "./progress.ts";
import { startRpcForwarder } from "./rpc-forwarder.ts";
import { createSnapshots, type StackSnapshot } from "./snapshot.ts";
import { RecentLines } from "./recent-lines.ts";
import { DEFAULT_FORK_CACHE_DIR, openRpcCache } from "./rpc-cache.ts";
import { redactUrl } from "../src/redact.ts";
import { actionControls, type ActionControls } from "./action-controls.ts";
import { BundleError, bundleBytes, saveBundle, unpackBundle } from "./bundle.ts";
import { traceOf, type Trace } from "./trace.ts";
import { DEV_PREFIX, registerDevRoutes } from "./dev-routes.ts";
import { transactCalldata } from "../src/relay/checks.ts";
import { relayControl } from "../src/relay/control.ts";
import { StackInfo } from "./stack-info.ts";
import { startRpcFaultProxy, type RpcFaultSpec, type RpcFaultState } from "./rpc-faults.ts";
import { deploymentSwitch, type DeploymentSwitch, type ServedDeployment } from "./deployment-switch.ts";
import { jsonRpc } from "./json-rpc.ts";
import { allowedHostsFor } from "./allowed-hosts.ts";
import { checkPortsFree } from "./ports.ts";
import { stateDirUndo } from "./state-dir-undo.ts";
import { mnemonicToAccount, privateKeyToAccount } from "viem/accounts";

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
  /**
   * Where the fork upstream's immutable answers are kept, to replay a fork at a pinned block without the
   * network (default ~/.cache/queue-devstack/fork-rpc, or $XDG_CACHE_HOME/queue-devstack/fork-rpc).
   */
  forkCacheDir?: string;
  /** Pin this existing Pool (fork mode) instead of deploying the fixtures. */
  pool?: string;
  /** The pinned Pool's deployment block; default: found on the chain. */
  deploymentBlock?: bigint | number;
  /** Called after each start-up step, with its duration. */
  onProgress?: ProgressListener;
  /**
   * Keep the chain in `<stateDir>/chain-state.json` (saved on every new block and on stop), and resume
   * from it (same blocks, same Pool, same manifest, same operation store) when it starts again, also
   * after a crash. Local mode only: a fork is reproduced by its pinned block.
   */
  persist?: boolean;
  /**
   * Start from a repro bundle (stack.save): the same chain, manifest and operations, in a fresh state
   * dir. A fork stack's bundle loads as a local chain holding the forked state it touched (no upstream
   * needed). Without forkUrl or pool; a bundle of another format version, or a damaged one, is refused (BundleError).
   */
  load?: string;
  /**
   * Host names the dev routes (/api/dev/*) also answer to, besides localhost, *.localhost, 127.0.0.0/8,
   * [::1] and the bound address: a name (devbox.local), an IP address, or ".name" for a name and its
   * subdomains. Any other Host is refused with 403 host_not_allowed (DNS rebinding protection).
   */
  allowedHosts?: readonly string[];
  /** Relayer behaviour (confirmations, fee cap, timings); defaults suit a dev chain. */
  relay?: Partial<RelaySettings>;
  /**
   * Browser origins allowed to call the queue (CORS). Default ["loopback"]: a front end on any
   * localhost port; add exact origins (a tunnel's, say) or pass [] for none.
   */
  corsOrigins?: readonly string[];
  /** The runtime's timeouts (see the README's Timeouts); defaults as buildQueueRuntime's. */
  runtime?: Pick<QueueRuntimeOptions, "chainTimeoutMs" | "requestTimeoutMs" | "headersTimeoutMs" | "quotes" | "rateLimit">;
  /** The operation store: default `<stateDir>/queue.sqlite` (durable); ":memory:" for tests that want it. */
  store?: string;
  /**
   * Fastify logger option for the runtime, e.g. `{ level: "info", stream: process.stderr }`. Default:
   * the last 40 lines at level info are kept in memory for `diagnostics()`, and nothing is printed.
   */
  logger?: FastifyServerOptions["logger"];
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
  /**
   * This moment of the stack — the chain and the queue's operation store together — to revert to
   * later. anvil's rule holds: reverting to a snapshot drops every snapshot taken after it.
   */
  snapshot(): Promise<StackSnapshot>;
  /** Back to a snapshot, in milliseconds, with no process restarted; the snapshot stays usable. */
  revert(snapshot: StackSnapshot): Promise<void>;
  /** Back to the stack as it was when it started (a revert to the snapshot taken then). */
  reset(): Promise<void>;
  /**
   * Hardhat's loadFixture for the whole stack: the first call (per setup function) runs `setup` from the
   * clean state and snapshots the result; later calls revert to that snapshot. A reset (or a revert to
   * an older snapshot) drops it, and its next use runs the setup again.
   */
  loadFixture<T>(setup: (stack: DevStack) => Promise<T>): Promise<T>;
  /**
   * What helps explain a failure: anvil's last output lines, the runtime's last log lines (unless a
   * logger was given), and the operations accepted since `since` (ISO 8601) with their states.
   */
  diagnostics(since?: string): StackDiagnostics;
  /**
   * The call trace of an operation, named and decoded: its mined transaction (a revert shows the Pool's
   * custom error and where it came from), or, for one never mined, its call replayed at the latest block.
   */
  trace(operationId: string): Promise<Trace>;
  /** Writes a repro bundle of this stack to `file`: chain (a fork's touched state included), manifest and operations; no key or credential. */
  save(file: string): Promise<{ bytes: number }>;
  /** The fixture action routes: set a price, fill an async reservation (or don't), let a deadline pass. */
  actions: ActionControls;
  /** Faults a client must survive, injected between the runtime and anvil (see the README's Faults). */
  faults: StackFaults;
  stop(): Promise<void>;
}

export interface StackFaults {
  /** The RPC as the runtime sees it, faults included: point a client at it to see them too. */
  rpcUrl: string;
  /** Makes the runtime's RPC fail, time out, answer late or lose logs (null: behave again). */
  rpc(fault: RpcFaultSpec | null): RpcFaultState;
  /** The next relay broadcast is mined and reverts (the verifier rejects its proof); false disarms. */
  revertNextRelay(armed?: boolean): RpcFaultState;
  state(): RpcFaultState;
  /** RPC faults and revert-next off (a revert or a reset also goes back to the original deployment). */
  clear(): void;
  /**
   * Serve another deployment from the queue URL (spec rules 7 and 8: the configuration changes while a
   * payment is pending), or the original again. The old deployment's runtime keeps settling what it
   * accepted, and answers status for it.
   */
  serve(which: ServedDeployment): Promise<{ serving: ServedDeployment; poolAddress: string }>;
  serving(): ServedDeployment;
}

export interface StackDiagnostics {
  anvil: string[];
  runtime: string[];
  operations: Array<{ id: string; kind: string; state: string; reason: string | null; transactionHash: string | null; createdAt: string }>;
}

/** State dirs of the stacks running in this process (stack.json alone cannot tell them apart: same PID). */
const liveStateDirs = new Set<string>();

/** The networks route's chain names: a wallet that adds the chain shows them. */
export const LOCAL_CHAIN_NAME = "Sepolia (local queue-devstack chain)";
export const LOCAL_FORK_CHAIN_NAME = "Sepolia (local queue-devstack fork)";

/** Dev accounts by anvil index: 0 deploys, 1 relays, the rest are for apps and tests. */
const DEPLOYER_INDEX = 0;
const RELAYER_INDEX = 1;

/** anvil's dev mnemonic: its account 10 relays for the alternate deployment (anvil funds 0 to 9). */
const ANVIL_MNEMONIC = "test test test test test test test test test test test junk";
function alternateRelayerKey(): Hex {
  const key = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 10 }).getHdKey().privateKey;
  if (!key) throw new Error("no key derived for the alternate relayer");
  return `0x${Buffer.from(key).toString("hex")}`;
}

/** A state dir whose saved files contradict each other, or a persisted stack started without persist. */
export class PersistedStateError extends Error {
  override name = "PersistedStateError";
}

/**
 * Starts a complete throwaway stack: anvil (local or fork), the Pool deployed or pinned, the manifest,
 * and the queue runtime. Whatever was started is stopped again if a later step fails.
 */
export async function startDevStack(options: DevStackOptions = {}): Promise<DevStack> {
  const host = options.host ?? "127.0.0.1";
  const progress = options.onProgress;
  if (options.pool !== undefined && options.forkUrl === undefined) {
    throw new Error("--pool pins an existing Pool on a fork: it needs --fork-url");
  }
  const ownsStateDir = options.stateDir === undefined;
  if (options.persist && (ownsStateDir || options.forkUrl !== undefined)) {
    throw new Error("persist saves a local stack in its state dir: it needs a stateDir and no fork (a fork is reproduced by its pinned block)");
  }
  const allowedHosts = allowedHostsFor(host, options.allowedHosts);
  const stateDir = path.resolve(options.stateDir ?? (await mkdtemp(path.join(tmpdir(), TEMP_STATE_DIR_PREFIX))));
  const manifestPath = path.join(stateDir, "manifest.json");
  const stackInfoPath = path.join(stateDir, "stack.json");
  const chainStateFile = path.join(stateDir, "chain-state.json");
  const storePath = options.store ?? path.join(stateDir, "queue.sqlite");

  if (liveStateDirs.has(stateDir)) {
    throw new StackAlreadyRunningError(`a stack is already running from ${stateDir} in this process; stop it, or choose another stateDir`);
  }
  liveStateDirs.add(stateDir);
  const cleanups: Array<() => Promise<unknown>> = [];
  // A failed start also undoes what it wrote (onFailure), after its processes are stopped.
  const onFailure: Array<() => Promise<unknown>> = [];
  const stopAll = async (thenUndo: Array<() => Promise<unknown>> = []) => {
    for (const cleanup of [...cleanups.splice(0).reverse(), ...thenUndo.splice(0).reverse()]) await cleanup().catch(() => {});
    liveStateDirs.delete(stateDir);
  };
  if (ownsStateDir) cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
  let startedChain: Chain | undefined;

  try {
    // What the state dir holds before anything is written: a failed start leaves it so.
    const undoWrites = ownsStateDir ? undefined : await stateDirUndo(stateDir);
    // Stacks of killed test workers: their temp dirs (and any anvil that outlived them) go now.
    const swept = ownsStateDir ? sweepAbandonedTempStacks().catch(() => []) : Promise.resolve([]);
    // First reclaim what a killed run left (its graceful stop is what writes its chain state), then decide.
    const leftover = await timed(progress, "check state dir", () => reclaimStateDir(stateDir), (r) =>
      r.found ? (r.stoppedAnvilPids.length > 0 ? `stopped anvil pid ${r.stoppedAnvilPids.join(", ")} left by a killed run` : "removed a stale process record") : undefined,
    );
    // No other stack runs from it now: what this start writes there is its own to undo.
    if (undoWrites) onFailure.push(undoWrites);
    // Both ports before anything is started or written (a leftover's anvil, stopped above, may have held one).
    await checkPortsFree(host, { chain: options.chainPort ?? 0, queue: options.queuePort ?? 0 });
    const owner = await currentOwner();
    await writeProcessRecord(stateDir, { owner, anvil: null });
    cleanups.push(() => rm(processRecordPath(stateDir), { force: true }));
    let loadedFork = false;
    const resume = options.load
      ? await timed(progress, "unpack bundle", async () => {
          if (options.forkUrl !== undefined || options.pool !== undefined) throw new BundleError("a bundle holds its whole chain (a fork's too): load it without a fork URL or a pinned Pool");
          if ((await exists(manifestPath)) || (await exists(chainStateFile))) throw new BundleError(`${stateDir} already holds a stack: load a bundle into an empty state dir`);
          loadedFork = (await unpackBundle(options.load as string, { chainState: chainStateFile, manifest: manifestPath, store: storePath })).mode === "fork";
          return true;
        })
      : await decideStart({ stateDir, persist: options.persist === true, manifestPath, chainStateFile, store: options.store === undefined ? storePath : undefined });

    // anvil forks a loopback forwarder: the upstream's credentials never reach its command line or files.
    // It keeps the upstream's immutable answers, to answer them when the upstream cannot be reached.
    const forwarder =
      options.forkUrl === undefined
        ? null
        : await startRpcForwarder(options.forkUrl, { cache: await openRpcCache(options.forkCacheDir ?? DEFAULT_FORK_CACHE_DIR, redactUrl(options.forkUrl)) });
    if (forwarder) cleanups.push(() => forwarder.close());
    const fork =
      options.forkUrl === undefined
        ? null
        : await timed(progress, "resolve fork point", () => resolveForkPoint(options.forkUrl as string, toBigInt(options.forkBlockNumber), forwarder?.url), (f) =>
            `${f.displayUrl} at block ${f.blockNumber}`,
          );
    const [fixtures, circuit] = await timed(progress, "load contracts", () =>
      Promise.all([loadFixtures((reason) => progress?.({ step: `contracts ${reason}: compiling`, ms: 0 })), loadCircuitManifest()]),
    );
    // A new local chain starts from the prepared genesis (fixtures deployed at fixed timestamps): the same
    // blocks and manifest on every run. In the repository, a genesis older than the contracts is not used.
    const genesis = fork || resume ? undefined : await loadGenesis(fixtures, circuit.levels);

    const chain: Chain = await timed(progress, fork ? "start anvil (fork)" : "start anvil", () =>
      startChain({
        host,
        port: options.chainPort ?? 0,
        stateDir,
        fork: fork && forwarder ? { url: forwarder.url, blockNumber: fork.blockNumber } : undefined,
        loadState: resume ? chainStateFile : genesis ? GENESIS_STATE_PATH : undefined,
        // anvil writes the chain when it is stopped, also by the orphan guard when this process dies.
        dumpState: options.persist ? chainStateFile : undefined,
        onProcess: (anvil) => writeProcessRecord(stateDir, { owner, anvil }),
      }),
    );
    startedChain = chain;
    // The chain is written only once it is known good (deployed, or checked against the manifest): until
    // then anvil is stopped without its dump, and a refused start leaves the saved files as they were.
    let chainGood = !options.persist;
    cleanups.push(() => chain.stop({ graceful: chainGood }));
    let saver: ChainSaver | null = null;
    const keepSaved = async () => {
      chainGood = true;
      if (!options.persist) return;
      saver = startChainSaver({ rpcUrl: chain.rpcUrl, file: chainStateFile });
      await saver.saveNow();
      const started = saver;
      cleanups.push(() => started.stop({ finalSave: true })); // runs before anvil is stopped
    };
    const client = createChainClient(chain.rpcUrl);
    const relayer = chain.accounts[RELAYER_INDEX] as DevAccount;
    const deployer = chain.accounts[DEPLOYER_INDEX] as DevAccount;

    const { pool, deploymentBlock } = resume
      ? await timed(progress, "resume saved chain", () => resumeDeployment(client, manifestPath), (d) => `Pool ${d.pool} from ${chainStateFile}`)
      : genesis
        ? await timed(progress, "load genesis", async () => {
            await keepSaved();
            return { pool: genesis.pool as Address, deploymentBlock: BigInt(genesis.deploymentBlock) };
          })
      : options.pool === undefined
        ? await timed(progress, "deploy fixtures", async () => {
            const deployment = await deployFixtures({
              client,
              fixtures,
              deployerKey: deployer.privateKey,
              holders: chain.accounts.map((a) => a.address),
              levels: circuit.levels,
            });
            // On disk before the manifest: a manifest is never without the chain it describes.
            await keepSaved();
            return { pool: deployment.pool, deploymentBlock: deployment.deploymentBlock };
          }, () => (fork ? undefined : "the committed genesis is stale: npm run build:genesis"))
        : await timed(progress, "pin pool", () =>
            pinPool({ client, pool: options.pool as string, atBlock: (fork as ForkPoint).blockNumber, deploymentBlock: toBigInt(options.deploymentBlock) }),
          );

    const manifest = await timed(progress, resume ? "check manifest" : "write manifest", async () => {
      // A fork's bundle holds the state it touched, not the upstream's logs a manifest is described from:
      // its manifest stands as saved, once the chain was checked to hold its Pool (resumeDeployment).
      if (loadedFork) return parseManifest(await readFile(manifestPath));
      const config = await describeDeployment({ client, pool, deploymentBlock, fixtures, circuit, relayer: relayer.address });
      const bytes = manifestBytes(config);
      if (resume) {
        if (!(await readFile(manifestPath)).equals(bytes)) {
          throw new PersistedStateError(`the saved chain does not describe the saved manifest ${manifestPath}; nothing was changed: remove ${stateDir} to start afresh`);
        }
        await keepSaved();
      } else {
        await writeFileAtomic(manifestPath, bytes);
        // A failed start must not leave a manifest that describes a chain nobody runs (a persisted one stays).
        if (!options.persist) cleanups.push(() => rm(manifestPath, { force: true }));
      }
      return config;
    });

    // The runtime reaches anvil through the fault proxy; wallets, clients and the controls reach it directly.
    const faults = await startRpcFaultProxy({ anvilUrl: chain.rpcUrl, pool: manifest.poolAddress as Address, verifier: manifest.queue.proof.verifier.address as Address });
    cleanups.push(() => faults.close());
    // What a fork bundle carries besides anvil's dump: the upstream state and blocks anvil read.
    const forkCapture = fork && forwarder ? { blockNumber: Number(fork.blockNumber), blockHash: fork.blockHash, reads: forwarder.reads } : null;
    const runtimeLog = new RecentLines();
    // The runtime's options but its deployment: the alternate deployment's runtime (a config switch) shares them.
    const runtimeOptions = {
      rpcUrl: faults.url,
      // New blocks by subscription, straight from anvil (faults apply to reads, through the proxy).
      wsRpcUrl: chain.rpcUrl.replace(/^http:/, "ws:"),
      publicRpcUrl: chain.rpcUrl,
      explorerUrl: fork ? "https://sepolia.etherscan.io" : null,
      // A wallet shows this name: it must not take the dev chain for the real Sepolia (same chain id).
      chainName: fork ? LOCAL_FORK_CHAIN_NAME : LOCAL_CHAIN_NAME,
      corsOrigins: options.corsOrigins ?? ["loopback"],
      artifactsDir: CIRCUIT_BUILD_DIR,
      // No rate limit unless asked: a test suite must never trip it.
      rateLimit: false,
      ...(options.relay ? { relay: options.relay } : {}),
      ...options.runtime,
      logger: options.logger ?? { level: "info", stream: runtimeLog },
    } satisfies Omit<QueueRuntimeOptions, "manifest">;
    const { app, deployments, traceOperation } = await timed(progress, "start queue runtime", async () => {
      // A store this start creates is its own to remove if it fails (a state dir it found keeps its files).
      if (storePath !== ":memory:" && !(await exists(storePath))) onFailure.push(() => removeStore(storePath));
      const runtime = await buildQueueRuntime({ ...runtimeOptions, manifest: manifestBytes(manifest), relayerPrivateKey: relayer.privateKey, store: storePath });
      cleanups.push(() => runtime.close());
      const deployments: DeploymentSwitch = deploymentSwitch({
        original: runtime,
        devPrefix: DEV_PREFIX,
        originalConfig: manifest,
        // A second copy of the fixtures with a relayer of its own (two engines never share a nonce).
        buildAlternate: async () => {
          const key = alternateRelayerKey();
          const alternateRelayer = privateKeyToAccount(key).address;
          const deployment = await deployFixtures({ client, fixtures, deployerKey: deployer.privateKey, holders: chain.accounts.map((a) => a.address), levels: circuit.levels });
          await jsonRpc(chain.rpcUrl, "anvil_setBalance", [alternateRelayer, `0x${(10_000n * 10n ** 18n).toString(16)}`]);
          const config = await describeDeployment({ client, pool: deployment.pool, deploymentBlock: deployment.deploymentBlock, fixtures, circuit, relayer: alternateRelayer });
          faults.addDeployment(deployment.pool, config.queue.proof.verifier.address as Address);
          // Its operations live as long as it is served or settling: a store in memory.
          return { runtime: await buildQueueRuntime({ ...runtimeOptions, manifest: manifestBytes(config), relayerPrivateKey: key, store: ":memory:" }), config };
        },
      });
      cleanups.push(() => deployments.discard());
      const traceOperation = async (operationId: string): Promise<Trace | undefined> => {
        const op = relayControl(runtime)?.operation(operationId);
        if (!op) return undefined;
        return traceOf({
          rpcUrl: chain.rpcUrl,
          config: manifest,
          fixtures,
          ...(op.minedHash
            ? { transactionHash: op.minedHash }
            : { call: { from: relayer.address, to: manifest.poolAddress as Address, data: transactCalldata(op.request), gas: 6_000_000n } }),
        });
      };
      await registerDevRoutes(runtime, {
        allowedHosts,
        rpcUrl: chain.rpcUrl,
        relayer: relayer.address,
        control: relayControl(runtime),
        faults,
        deployments,
        trace: traceOperation,
        bundle: () => bundleBytes({ rpcUrl: chain.rpcUrl, manifestPath, control: relayControl(runtime), fork: forkCapture }),
      });
      await runtime.listen({ host, port: options.queuePort ?? 0 });
      return { app: runtime as FastifyInstance, deployments, traceOperation };
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
      faultRpcUrl: faults.url,
      queueUrl,
      fork: fork ? { url: fork.displayUrl, blockNumber: Number(fork.blockNumber), blockHash: fork.blockHash } : null,
      stateDir,
      manifestPath,
      chainState: options.persist ? chainStateFile : null,
      poolAddress: manifest.poolAddress,
      relayer: { address: relayer.address },
      devAccounts: accounts.map((a) => ({ ...a, role: a === deployer ? "deployer" : "dev" })),
      processes: { owner, anvil: { pid: chain.pid, marker: chain.marker } },
      startedAt: new Date().toISOString(),
    });
    await writeFileAtomic(stackInfoPath, `${JSON.stringify(info, null, 2)}\n`);
    cleanups.push(() => rm(stackInfoPath, { force: true }));
    await swept;

    // The clean state, taken now: reset() goes back to it.
    const snapshots = createSnapshots({ rpcUrl: chain.rpcUrl, control: relayControl(app) });
    const clean = await snapshots.take();
    const loaded = new Map<(stack: DevStack) => Promise<unknown>, { snapshot: StackSnapshot; value: unknown }>();
    const revert = async (snapshot: StackSnapshot) => {
      // A fault belongs to the moment it was switched on; the alternate deployment may be reverted away.
      faults.clear();
      await deployments.discard();
      await snapshots.revert(snapshot);
      for (const [setup, fixture] of loaded) if (!snapshots.has(fixture.snapshot)) loaded.delete(setup);
    };
    let stopping: Promise<void> | undefined;
    const stack: DevStack = {
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
      async trace(operationId) {
        const trace = await traceOperation(operationId);
        if (!trace) throw new Error(`no operation ${operationId} in this stack's store`);
        return trace;
      },
      save: (file) => saveBundle({ file, rpcUrl: chain.rpcUrl, manifestPath, control: relayControl(app), fork: forkCapture }),
      faults: {
        rpcUrl: faults.url,
        rpc: (fault) => faults.set(fault),
        revertNextRelay: (armed = true) => faults.revertNextRelay(armed),
        state: () => faults.state(),
        clear: () => faults.clear(),
        serve: (which) => deployments.serve(which),
        serving: () => deployments.serving(),
      },
      actions: actionControls({ rpcUrl: chain.rpcUrl, client, config: manifest, deployerKey: deployer.privateKey }),
      snapshot: () => snapshots.take(),
      revert,
      reset: () => revert(clean),
      async loadFixture<T>(setup: (stack: DevStack) => Promise<T>): Promise<T> {
        const known = loaded.get(setup);
        if (known) {
          await revert(known.snapshot);
          return known.value as T;
        }
        await revert(clean);
        const value = await setup(stack);
        loaded.set(setup, { snapshot: await snapshots.take(), value });
        return value;
      },
      diagnostics: (since = new Date(0).toISOString()) => ({
        anvil: chain.recentLogs(),
        runtime: options.logger === undefined ? runtimeLog.recent() : [],
        operations: (relayControl(app)?.operationsSince(since) ?? []).map((op) => ({
          id: op.id,
          kind: op.kind,
          state: op.state,
          reason: op.reason === null ? null : `${op.reason.code}: ${op.reason.detail}`,
          transactionHash: op.minedHash ?? op.attempts.at(-1)?.hash ?? null,
          createdAt: op.createdAt,
        })),
      }),
      stop: () => (stopping ??= stopAll()),
    };
    return stack;
  } catch (error) {
    // A step that failed because anvil died says so, rather than as the RPC's "connection refused".
    const exited = await startedChain?.exitError("during the stack's start-up", error);
    await stopAll(onFailure);
    throw exited ?? error;
  }
}

/**
 * Resume a persisted stack, or start afresh? Decided after the leftover was reclaimed. A store is
 * deleted only when no chain will be loaded for it; files that contradict each other are refused,
 * never repaired by redeploying.
 */
async function decideStart(args: { stateDir: string; persist: boolean; manifestPath: string; chainStateFile: string; store: string | undefined }): Promise<boolean> {
  const [savedChain, savedManifest] = await Promise.all([exists(args.chainStateFile), exists(args.manifestPath)]);
  if (!args.persist && savedChain) {
    throw new PersistedStateError(`${args.stateDir} holds a persisted stack (chain-state.json): start it with --persist, or choose another --state-dir`);
  }
  if (args.persist && savedChain && savedManifest) return true;
  if (args.persist && savedManifest) {
    throw new PersistedStateError(`${args.stateDir} holds a manifest but no saved chain (chain-state.json): its operations cannot be resumed; remove ${args.stateDir} to start afresh`);
  }
  // A fresh chain: a chain saved before any manifest was written never served anything, and operations
  // stored by an earlier run belong to a chain that is gone.
  await rm(args.chainStateFile, { force: true });
  if (args.store !== undefined) await removeStore(args.store);
  return false;
}

/** An operation store's files: the database and SQLite's write-ahead log and its index. */
function removeStore(store: string): Promise<unknown> {
  return Promise.all(["", "-wal", "-shm"].map((suffix) => rm(`${store}${suffix}`, { force: true })));
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
    throw new PersistedStateError(`the saved chain does not hold the saved manifest's Pool (${(error as Error).message}); nothing was changed: remove ${path.dirname(manifestPath)} to start afresh`);
  }
  return { pool: saved.poolAddress as Address, deploymentBlock: BigInt(saved.deploymentBlock) };
}

function toBigInt(value: bigint | number | undefined): bigint | undefined {
  return value === undefined ? undefined : BigInt(value);
}

export type { DevAccount, Hex };
