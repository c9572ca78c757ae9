import type { FastifyServerOptions } from "fastify";
import { $ZodError } from "zod/v4/core";
import type { Address, Hex } from "viem";
import type { DeploymentConfig } from "../src/config/deployment-config.ts";
import type { QueueRuntimeOptions } from "../src/server.ts";
import type { RelaySettings } from "../src/relay/settings.ts";
import { relayControl } from "../src/relay/control.ts";
import { printable } from "../src/printable.ts";
import { QueueDevstackError } from "../src/errors/index.ts";
import type { ProofSystemName } from "../src/chain/dev-proof.ts";
import { StackParts, timed, type ProgressListener, type StackPart } from "./part/index.ts";
import { readProofHashes, stackInfoPart, stateDirPart, StackInfo, writeProofHashes, type LeftoverReport } from "./state-dir/index.ts";
import { chainPart, connectFaults, faultsPart, forkUpstreamPart, saverPart, type DevAccount, type ForkPoint, type RpcFaultSpec, type RpcFaultState, type StackChain } from "./chain/index.ts";
import { contractsPart, deploymentPart } from "./deployment/index.ts";
import { runtimeBuilderPart, runtimePart } from "./runtime/index.ts";
import { actionControls, allowedHostsFor, allowedOriginsFor, devRoutesPart, registerDevOnly, snapshotsPart, type ActionControls, type ServedDeployment, type StackSnapshot } from "./dev/index.ts";
import { BundleError, saveBundle } from "./bundle/index.ts";
import type { Trace } from "./trace/index.ts";
import { patchPart, patchRoutes, type PatchResult } from "./patch/index.ts";
import { manifestBytes, writeFileAtomic } from "./deployment/index.ts";
import { codeChanges } from "../src/code-change.ts";
import type { PatchedContract } from "../src/config/patched-contract.ts";
import type { ReplayAnswer, ReplayOptions } from "./replay/index.ts";

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
  /**
   * What the Pool's verifier expects. "groth16" (the default): real proofs. "dev": DEVELOPMENT ONLY, the
   * Pool is verified by DevVerifier, which accepts a dev proof (a tag and a hash binding the verifier,
   * the chain id and every public input); clients still compute the full witness, so every circuit
   * constraint is checked, but nothing is proved. Refused with `pool` (a pinned Pool's verifier is
   * real); a resumed or loaded stack keeps the mode it was saved with. Default: $QUEUE_DEVSTACK_PROOFS
   * when set (a suite's switch; ignored with `pool`), else "groth16".
   */
  proofs?: ProofSystemName;
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
   * Its live operations wait, the relayer paused, until it is resumed (POST /api/dev/relayer, ctl relayer resume).
   */
  load?: string;
  /**
   * Host names the dev routes (/api/dev/*) also answer to, besides localhost, *.localhost, 127.0.0.0/8,
   * [::1] and the bound address: a name (devbox.local), an IP address, or ".name" for a name and its
   * subdomains. Any other Host is refused with 403 host_not_allowed (DNS rebinding protection).
   */
  allowedHosts?: readonly string[];
  /**
   * Relayer behaviour (confirmations, fee cap, timings); defaults suit a dev chain. A dev stack's
   * `keepRejected` is 300: a submission the chain refuses is kept as a `rejected` operation, which the
   * refusal names (`operationId`).
   */
  relay?: Partial<RelaySettings>;
  /**
   * Browser origins allowed to call the queue (CORS). Default ["loopback"]: a front end on any
   * localhost port; add exact origins (a tunnel's, say) or pass [] for none. The exact origins may drive
   * the dev controls too; besides them, only the stack's own pages and loopback origins may: another
   * site's page is refused (403 cross_origin_refused), with or without a body.
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
  /**
   * Contracts to patch in place once deployed, pinned or loaded, before the runtime starts, each as
   * `<contract>=<path>` (`Pool=contracts/Pool.sol`): see DevStack.patch. Default: none.
   */
  patch?: readonly string[];
  /**
   * Gives up the start (as fetch's or execa's `signal`): when it aborts — a Ctrl-C, a test's timeout —
   * the step under way stops (a bundle's unpacking, anvil's start) or the next does not begin, every part
   * started so far is stopped, the state dir is left as it was found, and startDevStack rejects with
   * `signal.reason` (an AbortError unless another reason was given). A stack that has started is not
   * stopped by it: stop() does that.
   */
  signal?: AbortSignal;
}

export interface DevStack {
  mode: "local" | "fork";
  /** What the Pool's verifier expects (the manifest's queue.proof.system): "dev" means dev proofs, nothing proved. */
  proofs: ProofSystemName;
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
  /**
   * Back to the stack as it was when it started (a revert to the snapshot taken then). It cannot be lost:
   * when anvil's snapshot is gone (a reorg replaced its block), the chain dumped at start is reloaded.
   */
  reset(): Promise<void>;
  /**
   * Hardhat's loadFixture for the whole stack: the first call (per setup function) runs `setup` from the
   * clean state and snapshots the result; later calls revert to that snapshot. A reset (or a revert to
   * an older snapshot) drops it, and its next use runs the setup again; so does a reorg that replaced its block.
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
  /**
   * Replaces a deployed contract's runtime code in place (anvil_setCode: storage, address and balance
   * kept). `contract`: Pool, verifier, registry, directory, an asset's symbol, or an address. `source`: a
   * .sol file (compiled with the npm solc, offline), a Hardhat artifact, build-info or compiler output
   * (`file:Contract` picks one). Refused (PatchError, the stack as it was) when the new code moves or
   * retypes a storage variable or changes an immutable. The manifest's code hash, the runtime, stack.json
   * and the health follow. A patch is part of the stack's baseline: reset and revert keep it.
   */
  patch(contract: string, source: string): Promise<PatchResult>;
  /**
   * The contract's code as the stack started with it again: a loaded bundle's patched code, else (or once
   * that is back) the code from before its first patch.
   */
  unpatch(contract: string): Promise<PatchResult>;
  /** The contracts patched now, and with what. */
  patches(): PatchedContract[];
  /**
   * Replays a stored operation: its exact request through the relayer's admission checks and simulation
   * on the chain as it is now (a patched contract, a changed slot) or at `options.at`, its call trace
   * diffed against the original's; `send` relays it again, as a new operation linked to the original.
   * Rejects with a ProblemError whose `code` says why it cannot be judged (operation_not_found,
   * operation_live, not_replayable, block_not_found, chain_unavailable). See docs/replay.md.
   */
  replay(operationId: string, options?: ReplayOptions): Promise<ReplayAnswer>;
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

export { PersistedStateError } from "./deployment/index.ts";

/**
 * The default of `proofs` for every stack a process starts (`QUEUE_DEVSTACK_PROOFS=dev vitest run`,
 * `node --test`, Hardhat): "groth16" or "dev". `exec` sets it for its command too.
 */
export const PROOFS_VARIABLE = "QUEUE_DEVSTACK_PROOFS";

/**
 * Starts a complete throwaway stack: anvil (local or fork), the Pool deployed or pinned, the manifest,
 * and the queue runtime. Whatever was started is stopped again if a later step fails.
 */
export async function startDevStack(options: DevStackOptions = {}): Promise<DevStack> {
  const signal = options.signal;
  signal?.throwIfAborted();
  const host = options.host ?? "127.0.0.1";
  const progress = options.onProgress;
  if (options.pool !== undefined && options.forkUrl === undefined) {
    throw new Error("--pool pins an existing Pool on a fork: it needs --fork-url");
  }
  for (const [what, value] of [["proofs", options.proofs], [PROOFS_VARIABLE, process.env[PROOFS_VARIABLE] || undefined]] as const) {
    if (value !== undefined && value !== "groth16" && value !== "dev") throw new Error(`${what} must be "groth16" or "dev", not ${JSON.stringify(value)}`);
  }
  if (options.proofs === "dev" && options.pool !== undefined) {
    throw new Error("dev proofs need a Pool verified by DevVerifier: a pinned Pool (--pool) is real and its verifier refuses them; fork without --pool to deploy the fixtures with dev proofs");
  }
  // A whole suite's switch, for any runner: the variable applies to stacks it can apply to (a new
  // deployment); a pinned Pool, a bundle or a saved stack keeps its own proofs.
  const proofs = options.proofs ?? (options.pool === undefined ? (process.env[PROOFS_VARIABLE] as ProofSystemName | undefined) || undefined : undefined);
  const ownsStateDir = options.stateDir === undefined;
  if (options.persist && (ownsStateDir || options.forkUrl !== undefined)) {
    throw new Error("persist saves a local stack in its state dir: it needs a stateDir and no fork (a fork is reproduced by its pinned block)");
  }
  const allowedHosts = allowedHostsFor(host, options.allowedHosts);
  // The runtime's CORS origins (its default is "loopback") may drive the dev controls too.
  const allowedOrigins = allowedOriginsFor(options.corsOrigins);

  // The parts, in the order they start; each takes what the ones before it gave. A failed start stops
  // those started so far, in reverse, then undoes what they wrote (the state dir left as it was found);
  // stop() stops them all, in reverse.
  const parts = new StackParts();
  // Each part starts only if the start was not given up, and one given up while it started is stopped
  // with the others (it is registered before it starts).
  const start = async <T>(part: StackPart<T>): Promise<T> => {
    signal?.throwIfAborted();
    const started = await parts.start(part);
    signal?.throwIfAborted();
    return started;
  };
  let startedChain: StackChain | undefined;
  try {
    const dir = await start(stateDirPart(options, { host }));
    // A state dir of the caller's (the CLI's .devstack) keeps the proof files' hashes across launches.
    const keptHashes = ownsStateDir ? undefined : await readProofHashes(dir.stateDir);
    const upstream = await start(forkUpstreamPart(options));
    const contracts = await start(contractsPart(options, { newLocalChain: !upstream.fork && !dir.resume, proofs }));
    // The proxy the runtime reaches anvil through listens first: the runtime can be built with its URL.
    const faults = await start(faultsPart());
    const builder = await start(runtimeBuilderPart(options, { faults, fork: upstream.fork !== null, dir }));
    // While anvil boots: a new chain from the committed genesis has its runtime built ahead (checked
    // against the chain before it listens); any other start does ahead what needs no chain.
    const { genesisManifest } = contracts;
    const onBooting = contracts.genesis && genesisManifest && !dir.resume ? () => builder.buildAhead(genesisManifest) : () => builder.warmUp(contracts.circuit);
    const chain = await start(chainPart(options, { host, dir, upstream, genesisState: contracts.genesisState, onBooting }));
    startedChain = chain;
    const saver = await start(saverPart(options, { chain, file: dir.chainStateFile }));
    const { manifest } = await start(deploymentPart(options, { dir, upstream, contracts, chain, saver, proofs }));
    connectFaults(faults, { chain, manifest });
    const patcher = await start(patchPart(options, { chain, manifest, dir, contracts }));
    // One step: the runtime, its dev routes registered before it listens, listening.
    const { runtime, dev, queueUrl } = await timed(progress, "start queue runtime", async () => {
      const runtime = await start(runtimePart(options, { host, builder, chain, manifest, dir }));
      const dev = await start(devRoutesPart({ runtime, chain, contracts, manifest, manifestPath: dir.manifestPath, faults, fork: upstream.capture, allowedHosts, allowedOrigins }));
      await registerDevOnly(runtime.app, allowedHosts, allowedOrigins, async (scope) => {
        await scope.register(patchRoutes, { patcher });
      });
      // A loaded bundle's live operations wait, as saved, until the developer resumes the relayer (ctl
      // relayer resume): loading a file signs and sends nothing, and "stuck at submitted" stays so.
      if (dir.loadedLive > 0) {
        const live = dir.loadedLive;
        await timed(progress, "hold loaded operations", async () => relayControl(runtime.app)?.pause("dev"), () => `${live} live operation${live === 1 ? "" : "s"} from the bundle wait, the relayer paused: queue-devstack ctl relayer resume`);
      }
      signal?.throwIfAborted();
      return { runtime, dev, queueUrl: await runtime.listen() };
    }, ({ runtime }) => (runtime.builtAhead ? "built while anvil booted, checked against the chain before it listened" : undefined));
    const info = await start(stackInfoPart(options, { dir, upstream, chain, manifest, faults, queueUrl }));
    // stack.json and the runtime say what is patched, from now on at every patch.
    const writePatches = async (patches: PatchedContract[]) => {
      if (patches.length > 0) info.patches = patches;
      else delete info.patches;
      await writeFileAtomic(dir.stackInfoPath, `${JSON.stringify(info, null, 2)}\n`);
    };
    patcher.attach({ runtime: runtime.app, lock: dev.lock, onChange: writePatches });
    if (patcher.patches().length > 0) {
      await writePatches(patcher.patches());
      await codeChanges(runtime.app)?.accept(manifestBytes(manifest), patcher.patches());
    }
    const snapshots = await start(snapshotsPart<DevStack>({ chain, fork: upstream.anvilFork, runtime, faults, deployments: dev.deployments, lock: dev.lock, afterRevert: () => patcher.reapply() }));
    dev.setReset(() => snapshots.reset());

    if (!ownsStateDir) await writeProofHashes(dir.stateDir, keptHashes);

    const app = runtime.app;
    let stopping: Promise<void> | undefined;
    const stack: DevStack = {
      mode: upstream.fork ? "fork" : "local",
      proofs: manifest.queue.proof.system,
      rpcUrl: chain.rpcUrl,
      queueUrl,
      manifest,
      manifestPath: dir.manifestPath,
      stackInfoPath: dir.stackInfoPath,
      stateDir: dir.stateDir,
      info,
      accounts: chain.devAccounts,
      relayer: { address: chain.relayer.address },
      chainPid: chain.pid,
      fork: upstream.fork,
      leftover: dir.leftover,
      async trace(operationId) {
        const trace = await dev.traceOperation(operationId);
        if (!trace) throw new Error(`no operation ${operationId} in this stack's store`);
        return trace;
      },
      patch: (contract, source) => patcher.patch(contract, source),
      unpatch: (contract) => patcher.unpatch(contract),
      patches: () => patcher.patches(),
      replay: (operationId, options) => dev.replayer.replay(operationId, options),
      save: (file) => dev.lock.run(() => saveBundle({ file, rpcUrl: chain.rpcUrl, manifestPath: dir.manifestPath, control: relayControl(app), fork: upstream.capture })),
      faults: {
        rpcUrl: faults.url,
        rpc: (fault) => faults.set(fault),
        revertNextRelay: (armed = true) => faults.revertNextRelay(armed),
        state: () => faults.state(),
        clear: () => faults.clear(),
        serve: (which) => dev.lock.run(() => dev.deployments.serve(which)),
        serving: () => dev.deployments.serving(),
      },
      actions: actionControls({ rpcUrl: chain.rpcUrl, client: chain.client, config: manifest, deployerKey: chain.deployer.privateKey }),
      snapshot: () => snapshots.take(),
      revert: (snapshot) => snapshots.revert(snapshot),
      reset: () => snapshots.reset(),
      loadFixture: (setup) => snapshots.loadFixture(stack, setup),
      diagnostics: (since = new Date(0).toISOString()) => ({
        anvil: chain.recentLogs(),
        runtime: runtime.recentLogs(),
        operations: (relayControl(app)?.operationsSince(since) ?? []).map((op) => ({
          id: op.id,
          kind: op.kind,
          state: op.state,
          reason: op.reason === null ? null : `${op.reason.code}: ${op.reason.detail}`,
          transactionHash: op.minedHash ?? op.attempts.at(-1)?.hash ?? null,
          createdAt: op.createdAt,
        })),
      }),
      stop: () => (stopping ??= parts.stop()),
    };
    return stack;
  } catch (error) {
    // A step that failed because anvil died says so, rather than as the RPC's "connection refused".
    const exited = signal?.aborted ? undefined : await startedChain?.exitError("during the stack's start-up", error);
    await parts.failedStart();
    // Given up: whatever a step threw as it was cut short, the caller asked for this.
    if (signal?.aborted) throw signal.reason;
    throw (options.load === undefined ? null : bundleFault(options.load, exited ?? error)) ?? exited ?? error;
  }
}

/** What a loaded bundle's chain or manifest made fail once started (by code): its chain refused, or the two not one stack. */
const BUNDLE_FAULTS: ReadonlySet<string> = new Set(["chain_start_failed", "persisted_state_invalid", "deployment_mismatch", "manifest_invalid"]);

/** A start from a bundle that failed on the bundle's own content is the bundle's refusal: one BundleError line (all started is stopped by then). */
function bundleFault(file: string, error: unknown): BundleError | null {
  if (!(error instanceof Error)) return null;
  // A schema's refusal of what the chain describes (a token's symbol that is not printable text, say):
  // its issues, as its message is JSON over many lines.
  const issues = error instanceof $ZodError ? error.issues : null;
  const why = issues ? `it describes ${issues.slice(0, 3).map((i) => `${i.path.map(String).join(".")}: ${i.message}`).join("; ")}` : error instanceof QueueDevstackError && BUNDLE_FAULTS.has(error.code) ? (error.message.split("\n")[0] as string) : null;
  return why === null ? null : new BundleError({ file, part: "stack", reason: printable(why) }, { cause: error });
}

export type { DevAccount, Hex };
