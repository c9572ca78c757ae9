import { access, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import { checkPortsFree, type ForkPoint, type StackChain } from "../chain/index.ts";
import { PersistedStateError } from "../deployment/index.ts";
import { writeFileAtomic } from "../files/index.ts";
import { BundleError, unpackBundle } from "../bundle/index.ts";
import { definePart, timed, type StackPart } from "../part/index.ts";
import type { DevStackOptions } from "../stack-options.ts";
import {
  claimStateDir,
  currentOwner,
  processRecordPath,
  reclaimStateDir,
  StackAlreadyRunningError,
  sweepAbandonedTempStacks,
  TEMP_STATE_DIR_PREFIX,
  writeProcessRecord,
  type LeftoverReport,
  type ProcessRecord,
} from "./leftovers.ts";
import type { StackInfo } from "../stack-info/index.ts";
import { stackUrls } from "./stack-urls.ts";
import { stateDirUndo } from "./state-dir-undo.ts";

/** State dirs of the stacks running in this process (stack.json alone cannot tell them apart: same PID). */
const liveStateDirs = new Set<string>();

export interface StateDir {
  stateDir: string;
  manifestPath: string;
  stackInfoPath: string;
  chainStateFile: string;
  storePath: string;
  owner: ProcessRecord["owner"];
  /** A stack left in the state dir by a killed run, and what was done about it. */
  leftover: LeftoverReport;
  /** The state dir holds a chain to resume (persisted, or unpacked from a bundle) rather than start afresh. */
  resume: boolean;
  /** The bundle unpacked was a fork stack's. */
  loadedFork: boolean;
  /** Live operations in the bundle unpacked (0 without one): they wait for the relayer to be resumed. */
  loadedLive: number;
  /** Abandoned temp stacks being swept meanwhile (awaited once the stack is up). */
  swept: Promise<unknown>;
  /** Records anvil (its marker, then its PID) in the process record. */
  recordAnvil(anvil: ProcessRecord["anvil"]): Promise<void>;
  /**
   * Called just before the runtime opens the operation store: a store this start creates is its own to
   * remove if the start fails (one it found keeps its files).
   */
  claimStoreIfNew(): Promise<void>;
}

/**
 * The state dir (a fresh temp dir unless one was given): reclaimed from a killed run, the stack's ports
 * checked before anything is started or written, recorded as this process's, and the decision to resume
 * what it holds, unpack a bundle into it, or start afresh. A failed start leaves it as it found it: one
 * it made is removed, in one that existed only what the start added (the operation store included).
 */
export function stateDirPart(
  // `signal`: a bundle's unpacking stops at once.
  options: Pick<DevStackOptions, "stateDir" | "store" | "persist" | "load" | "forkUrl" | "pool" | "chainPort" | "queuePort" | "onProgress" | "signal">,
  args: { host: string },
): StackPart<StateDir> {
  return definePart("state dir", async (onStop, { onFailedStart, onReleased }) => {
    const progress = options.onProgress;
    const ownsStateDir = options.stateDir === undefined;
    const stateDir = path.resolve(options.stateDir ?? (await mkdtemp(path.join(tmpdir(), TEMP_STATE_DIR_PREFIX))));
    const manifestPath = path.join(stateDir, "manifest.json");
    const stackInfoPath = path.join(stateDir, "stack.json");
    const chainStateFile = path.join(stateDir, "chain-state.json");
    const storePath = options.store ?? path.join(stateDir, "queue.sqlite");

    if (liveStateDirs.has(stateDir)) {
      throw new StackAlreadyRunningError(`a stack is already running from ${stateDir} in this process; stop it, or choose another stateDir`);
    }
    liveStateDirs.add(stateDir);
    // Released last: after a failed start, only once what it wrote here is undone.
    onReleased(async () => liveStateDirs.delete(stateDir));
    if (ownsStateDir) onStop(() => rm(stateDir, { recursive: true, force: true }));

    // What the state dir holds before anything is written: a failed start leaves it so.
    const undoWrites = ownsStateDir ? undefined : await stateDirUndo(stateDir);
    // Stacks of killed test workers: their temp dirs (and any anvil that outlived them) go now.
    const swept = ownsStateDir ? sweepAbandonedTempStacks().catch(() => []) : Promise.resolve([]);
    // First reclaim what a killed run left (its graceful stop is what writes its chain state), then decide.
    const leftover = await timed(progress, "check state dir", () => reclaimStateDir(stateDir), (r) =>
      r.found ? (r.stoppedAnvilPids.length > 0 ? `stopped anvil pid ${r.stoppedAnvilPids.join(", ")} left by a killed run` : "removed a stale process record") : undefined,
    );
    // Both ports before anything is started or written (a leftover's anvil, stopped above, may have held one).
    await checkPortsFree(args.host, { chain: options.chainPort ?? 0, queue: options.queuePort ?? 0 });
    const owner = await currentOwner();
    await claimStateDir(stateDir, owner);
    onStop(() => rm(processRecordPath(stateDir), { force: true }));
    // Claimed, no other stack runs from it: what this start writes there is its own to undo (after a
    // failed start, once every part has stopped). Not before: a start refused here undoes nothing.
    if (undoWrites) onFailedStart(undoWrites);
    let loadedFork = false;
    let loadedLive = 0;
    const resume = options.load
      ? await timed(progress, "unpack bundle", async () => {
          if (options.forkUrl !== undefined || options.pool !== undefined) throw new BundleError({ reason: "a bundle holds its whole chain (a fork's too): load it without a fork URL or a pinned Pool" });
          if ((await exists(manifestPath)) || (await exists(chainStateFile))) throw new BundleError({ file: stateDir, reason: "already holds a stack: load a bundle into an empty state dir" });
          // The bundle's store is renamed onto the store path: one there would be lost (a failed start's undo removes only what it added).
          if (storePath === ":memory:") throw new BundleError({ reason: 'a bundle\'s operations are loaded into a store file: load it without store ":memory:"' });
          for (const file of storeFiles(storePath)) {
            if (!(await exists(file))) continue;
            throw new BundleError(
              options.store === undefined
                ? { file: stateDir, reason: `already holds an operation store (${path.basename(file)}): load a bundle into an empty state dir` }
                : { file, reason: "already holds an operation store: load a bundle with a store path where none is" },
            );
          }
          // The store it writes is this start's (none was there): a failed start removes it, outside the state dir too.
          onFailedStart(() => removeStore(storePath));
          const unpacked = await unpackBundle(options.load as string, { chainState: chainStateFile, manifest: manifestPath, store: storePath }, stateDir, options.signal);
          loadedFork = unpacked.mode === "fork";
          loadedLive = unpacked.live;
          return unpacked;
        }, (u) => (u.failed > 0 ? `${u.failed} operation${u.failed === 1 ? "" : "s"} failed as bundle_attempt_invalid (a stored attempt not the relayer's call of the Pool)` : undefined)).then(() => true)
      : await decideStart({ stateDir, persist: options.persist === true, manifestPath, chainStateFile, store: options.store === undefined ? storePath : undefined });
    return {
      stateDir,
      manifestPath,
      stackInfoPath,
      chainStateFile,
      storePath,
      owner,
      leftover,
      resume,
      loadedFork,
      loadedLive,
      swept,
      recordAnvil: (anvil) => writeProcessRecord(stateDir, { owner, anvil }),
      async claimStoreIfNew() {
        if (storePath !== ":memory:" && !(await exists(storePath))) onFailedStart(() => removeStore(storePath));
      },
    };
  });
}

/** `<state-dir>/stack.json`, written once the stack is up (and removed when it stops): its facts for other tools. */
export function stackInfoPart(
  options: Pick<DevStackOptions, "pool" | "persist">,
  args: { dir: StateDir; upstream: { fork: ForkPoint | null }; chain: StackChain; manifest: DeploymentConfig; faults: { url: string }; queueUrl: string },
): StackPart<StackInfo> {
  return definePart("stack info", async (onStop) => {
    const { stateDir, manifestPath, stackInfoPath, chainStateFile, owner, swept } = args.dir;
    const { fork } = args.upstream;
    const { chain, manifest, faults, queueUrl } = args;
    const { relayer, deployer } = chain;
    const accounts = chain.devAccounts;
    // Typed, not parsed: these are the stack's own values, and zod's first parse of a schema costs a start
    // its lazy set-up (readers of stack.json parse it: scripts/cli/running-stack.ts).
    const info: StackInfo = {
      version: 1,
      mode: fork ? "fork" : "local",
      pool: options.pool === undefined ? "deployed" : "pinned",
      proofs: manifest.queue.proof.system,
      chainId: manifest.chainId,
      ...stackUrls(chain.rpcUrl, queueUrl),
      faultRpcUrl: faults.url,
      fork: fork ? { url: fork.displayUrl, blockNumber: Number(fork.blockNumber), blockHash: fork.blockHash } : null,
      stateDir,
      manifestPath,
      chainState: options.persist ? chainStateFile : null,
      poolAddress: manifest.poolAddress,
      relayer: { address: relayer.address },
      devAccounts: accounts.map((a) => ({ address: a.address, privateKey: a.privateKey, role: a === deployer ? "deployer" : "dev" })),
      processes: { owner, anvil: { pid: chain.pid, marker: chain.marker } },
      startedAt: new Date().toISOString(),
    };
    await writeFileAtomic(stackInfoPath, `${JSON.stringify(info, null, 2)}\n`);
    onStop(() => rm(stackInfoPath, { force: true }));
    await swept;
    return info;
  });
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
function storeFiles(store: string): string[] {
  return ["", "-wal", "-shm"].map((suffix) => `${store}${suffix}`);
}

function removeStore(store: string): Promise<unknown> {
  return Promise.all(storeFiles(store).map((file) => rm(file, { force: true })));
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
