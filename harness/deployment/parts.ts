import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import type { Address, Hex, PublicClient } from "viem";
import { DeploymentConfig } from "../../src/config/deployment-config.ts";
import { verifyDeployment } from "../../src/chain/verify-deployment.ts";
import type { ForkPoint, StackChain } from "../chain/index.ts";
import { definePart, timed, type StackPart } from "../part/index.ts";
import type { DevStackOptions } from "../stack-options.ts";
import { loadCircuitManifest, type CircuitManifest } from "./circuit.ts";
import { deployFixtures } from "./deploy.ts";
import { loadFixtures, type CompiledFixtures } from "./fixtures.ts";
import { genesisFiles, loadGenesis, type Genesis } from "./genesis.ts";
import { describeProofSystem, type ProofSystemName } from "../../src/chain/dev-proof.ts";
import { describeDeployment, manifestBytes, proofSection } from "./manifest.ts";
import { writeFileAtomic } from "../files/index.ts";
import { pinPool } from "./pin.ts";
import { QueueDevstackError } from "../../src/errors/index.ts";

/** src/server.ts's, loaded on first use: this folder's door stays light (the vitest global setup loads contracts, not a runtime). */
const parseManifest = async (bytes: Uint8Array): Promise<DeploymentConfig> => (await import("../../src/server.ts")).parseManifest(bytes);

/** A state dir whose saved files contradict each other, or a persisted stack started without persist. */
export class PersistedStateError extends QueueDevstackError {
  override name = "PersistedStateError";
  readonly code = "persisted_state_invalid";
}

export interface Contracts {
  fixtures: CompiledFixtures;
  circuit: CircuitManifest;
  /** The prepared genesis, for a new local chain (none when it is older than the contracts). */
  genesis: Genesis | undefined;
  /** Its chain state, for anvil to load. */
  genesisState: string | undefined;
  /** The manifest that describes it, built with it (none when it is older than that). */
  genesisManifest: Uint8Array | undefined;
}

/** The compiled fixtures and proof files, and the prepared genesis for a new local chain. */
export function contractsPart(options: Pick<DevStackOptions, "onProgress">, args: { newLocalChain: boolean; proofs: ProofSystemName | undefined }): StackPart<Contracts> {
  return definePart("contracts", async () => {
    const progress = options.onProgress;
    const [fixtures, circuit] = await timed(progress, "load contracts", () =>
      Promise.all([loadFixtures((reason) => progress?.({ step: `contracts ${reason}: compiling`, ms: 0 })), loadCircuitManifest()]),
    );
    // A new local chain starts from the prepared genesis (fixtures deployed at fixed timestamps): the same
    // blocks and manifest on every run. In the repository, a genesis older than the contracts is not used.
    const genesis = args.newLocalChain ? await loadGenesis(fixtures, circuit.levels, args.proofs) : undefined;
    const genesisManifest = genesis ? await readFile(genesisFiles(args.proofs).manifest).catch(() => undefined) : undefined;
    return { fixtures, circuit, genesis, genesisState: genesis ? genesisFiles(args.proofs).state : undefined, genesisManifest };
  });
}

/**
 * The Pool on the chain (resumed, from the genesis, deployed, or pinned) and the manifest that describes
 * it, written (or, resumed, checked against the saved one).
 */
export function deploymentPart(
  options: Pick<DevStackOptions, "pool" | "deploymentBlock" | "persist" | "proofs" | "onProgress">,
  args: {
    dir: { stateDir: string; manifestPath: string; chainStateFile: string; resume: boolean; loadedFork: boolean };
    upstream: { fork: ForkPoint | null };
    contracts: Contracts;
    chain: StackChain;
    saver: { keepSaved(): Promise<void> };
    /** The proofs of a new deployment: the option's, or the process's default (options.proofs alone is a demand a saved stack must meet). */
    proofs: ProofSystemName | undefined;
  },
): StackPart<{ manifest: DeploymentConfig }> {
  return definePart("deployment", async (onStop) => {
    const progress = options.onProgress;
    const { stateDir, manifestPath, chainStateFile, resume, loadedFork } = args.dir;
    const { fork } = args.upstream;
    const { fixtures, circuit, genesis, genesisManifest } = args.contracts;
    const { chain } = args;
    const { client, relayer, deployer } = chain;
    const { keepSaved } = args.saver;

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
              proofs: args.proofs,
            });
            // On disk before the manifest: a manifest is never without the chain it describes.
            await keepSaved();
            return { pool: deployment.pool, deploymentBlock: deployment.deploymentBlock };
          }, () => (fork ? undefined : "the committed genesis is stale: npm run build:genesis"))
        : await timed(progress, "pin pool", () =>
            pinPool({ client, pool: options.pool as string, atBlock: (fork as ForkPoint).blockNumber, deploymentBlock: options.deploymentBlock === undefined ? undefined : BigInt(options.deploymentBlock) }),
          );

    let prepared: DeploymentConfig | undefined;
    const manifest = await timed(progress, resume ? "check manifest" : "write manifest", async () => {
      // A new chain from the genesis: the manifest built with it, not described from the chain again (the
      // runtime checks it against the chain before it answers anything).
      prepared = genesis && !resume && genesisManifest ? await preparedManifest(genesisManifest, { genesis, circuit, relayer: relayer.address }) : undefined;
      // A fork's bundle holds the state it touched, not the upstream's logs the routes are found from: its
      // manifest's routes are taken as the ones to check (each against Pool.routes), and all else is
      // described from its chain, as for any saved stack: a manifest of its own making is refused.
      const routeIds = loadedFork ? (await parseManifest(await readFile(manifestPath))).routes.flatMap((r) => (r.action === "external" ? [r.id as Hex] : [])) : undefined;
      const config = prepared ?? (await describeDeployment({ client, pool, deploymentBlock, fixtures, circuit, relayer: relayer.address, routeIds }));
      const bytes = prepared && genesisManifest ? genesisManifest : manifestBytes(config);
      if (resume) {
        if (!(await readFile(manifestPath)).equals(bytes)) {
          throw new PersistedStateError(`the saved chain does not describe the saved manifest ${manifestPath}; nothing was changed: remove ${stateDir} to start afresh`);
        }
        await keepSaved();
      } else {
        await writeFileAtomic(manifestPath, bytes);
        // A failed start must not leave a manifest that describes a chain nobody runs (a persisted one stays).
        if (!options.persist) onStop(() => rm(manifestPath, { force: true }));
      }
      // A saved or loaded stack keeps the proofs it was made with: asking for others is refused, not ignored.
      if (options.proofs !== undefined && options.proofs !== config.queue.proof.system) {
        throw new PersistedStateError(`this stack was saved with ${describeProofSystem(config.queue.proof.system)}; it cannot start with ${describeProofSystem(options.proofs)}: leave the proofs option out, or start afresh`);
      }
      return config;
    }, () => (prepared ? "the genesis's own, checked against the chain as the runtime starts" : undefined));
    return { manifest };
  });
}

/**
 * The genesis's manifest, if it still is what describing the genesis would give: its Pool and block,
 * this stack's relayer, and the proof files as they are now (a rebuilt circuit changes them).
 */
async function preparedManifest(bytes: Uint8Array, args: { genesis: Genesis; circuit: CircuitManifest; relayer: Address }): Promise<DeploymentConfig | undefined> {
  const config = await parseManifest(bytes).catch(() => undefined);
  if (!config || config.poolAddress !== args.genesis.pool || config.deploymentBlock !== args.genesis.deploymentBlock || config.relayFees.relayer !== args.relayer) return undefined;
  const { verifier, system } = config.queue.proof;
  const proof = proofSection(args.circuit, verifier.address as Address, verifier.runtimeCodeHash as Hex, system);
  const current = manifestBytes(DeploymentConfig.parse({ ...config, queue: { ...config.queue, proof } }));
  return Buffer.from(current).equals(bytes) ? config : undefined;
}

/** A saved stack's Pool, checked against the chain it was saved with. */
async function resumeDeployment(client: PublicClient, manifestPath: string): Promise<{ pool: Address; deploymentBlock: bigint }> {
  const saved = await parseManifest(await readFile(manifestPath));
  try {
    await verifyDeployment(client, saved);
  } catch (error) {
    throw new PersistedStateError(`the saved chain does not hold the saved manifest's Pool (${(error as Error).message}); nothing was changed: remove ${path.dirname(manifestPath)} to start afresh`);
  }
  return { pool: saved.poolAddress as Address, deploymentBlock: BigInt(saved.deploymentBlock) };
}
