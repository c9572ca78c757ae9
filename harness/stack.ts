import { $ZodError } from "zod/v4/core";
import type { Hex } from "viem";
import { relayControl } from "../src/relay/control.ts";
import { printable } from "../src/printable.ts";
import { QueueDevstackError } from "../src/errors/index.ts";
import type { ProofSystemName } from "../src/chain/dev-proof.ts";
import { StackParts, timed, type StackPart } from "./part/index.ts";
import { readProofHashes, stackInfoPart, stateDirPart, writeProofHashes } from "./state-dir/index.ts";
import { chainPart, connectFaults, faultsPart, forkUpstreamPart, saverPart, type DevAccount, type StackChain } from "./chain/index.ts";
import { contractsPart, deploymentPart } from "./deployment/index.ts";
import { runtimeBuilderPart, runtimePart } from "./runtime/index.ts";
import { actionControls, allowedHostsFor, allowedOriginsFor, devRoutesPart, registerDevOnly } from "./dev/index.ts";
import { controlLock, snapshotsPart, type SnapshotControls } from "./snapshot/index.ts";
import { BundleError, saveBundle } from "./bundle/index.ts";
import { patchPart, patchRoutes } from "./patch/index.ts";
import { manifestBytes } from "./deployment/index.ts";
import { writeFileAtomic } from "./files/index.ts";
import { codeChanges } from "../src/code-change.ts";
import type { PatchedContract } from "../src/config/patched-contract.ts";
import type { DevStackOptions } from "./stack-options.ts";
import type { DevStack } from "./dev-stack.ts";

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
  // The stack's dev controls one at a time, whichever way they come: the dev routes, the snapshots, the
  // patcher, replays, save and serve all take this one lock.
  const lock = controlLock();
  // Made once the stack is ready (the clean state is taken then); a reset asked before is refused.
  let snapshots: SnapshotControls<DevStack> | undefined;

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
      const dev = await start(devRoutesPart({ runtime, chain, contracts, manifest, manifestPath: dir.manifestPath, faults, fork: upstream.capture, allowedHosts, allowedOrigins, lock, reset: () => snapshots?.reset }));
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
    patcher.attach({ runtime: runtime.app, lock, onChange: writePatches });
    if (patcher.patches().length > 0) {
      await writePatches(patcher.patches());
      await codeChanges(runtime.app)?.accept(manifestBytes(manifest), patcher.patches());
    }
    const ready = await start(snapshotsPart<DevStack>({ chain, fork: upstream.anvilFork, runtime, faults, deployments: dev.deployments, lock, afterRevert: () => patcher.reapply() }));
    snapshots = ready;

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
      save: (file) => lock.run(() => saveBundle({ file, rpcUrl: chain.rpcUrl, manifestPath: dir.manifestPath, control: relayControl(app), fork: upstream.capture })),
      faults: {
        rpcUrl: faults.url,
        rpc: (fault) => faults.set(fault),
        revertNextRelay: (armed = true) => faults.revertNextRelay(armed),
        state: () => faults.state(),
        clear: () => faults.clear(),
        serve: (which) => lock.run(() => dev.deployments.serve(which)),
        serving: () => dev.deployments.serving(),
      },
      actions: actionControls({ rpcUrl: chain.rpcUrl, client: chain.client, config: manifest, deployerKey: chain.deployer.privateKey }),
      snapshot: () => ready.take(),
      revert: (snapshot) => ready.revert(snapshot),
      reset: () => ready.reset(),
      loadFixture: (setup) => ready.loadFixture(stack, setup),
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
