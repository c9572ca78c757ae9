import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { z } from "zod";
import { createChainClient } from "../../src/chain/client.ts";
import type { ProofSystemName } from "../../src/chain/dev-proof.ts";
import { CHAIN_ID, startChain, type Chain, type DevAccount } from "../chain/index.ts";
import { DEV_ASSETS, DEV_TOKEN_GRANT, deployFixtures } from "./deploy.ts";
import { FIXTURES_DIR, type CompiledFixtures } from "./fixtures.ts";
import type { CircuitManifest } from "./circuit.ts";
import { describeDeployment, manifestBytes } from "./manifest.ts";
import { FROM_SOURCE } from "./package-root.ts";

const require = createRequire(import.meta.url);

/**
 * The prepared genesis of a local stack: anvil's state with the fixtures already deployed, at fixed
 * timestamps, committed with the package. Every local stack loads it, so every run on every machine
 * has the same addresses, the same deployment block and the same block hash, hence a byte-identical
 * manifest that a client's reviewed deployment data (spec rule 6) can pin; and no deploy at start.
 * Time after start moves normally. `npm run build:genesis` makes it; in the repository a stale one
 * (other contracts, another anvil) is not used, and a test fails until it is rebuilt.
 */
export const GENESIS_STATE_PATH = path.join(FIXTURES_DIR, "genesis-state.json");
export const GENESIS_PATH = path.join(FIXTURES_DIR, "genesis.json");

/**
 * Each proof system's genesis: the same deployments but for the Pool's verifier (dev proofs: DevVerifier),
 * so each mode has its own blocks and its own byte-identical manifest.
 */
export function genesisFiles(proofs: ProofSystemName = "groth16"): { state: string; info: string; manifest: string } {
  const prefix = proofs === "dev" ? "genesis-dev" : "genesis";
  return { state: path.join(FIXTURES_DIR, `${prefix}-state.json`), info: path.join(FIXTURES_DIR, `${prefix}.json`), manifest: path.join(FIXTURES_DIR, `${prefix}-manifest.json`) };
}

/** 2026-01-01T00:00:00Z: the genesis block; the deployments follow 12 s apart. */
export const GENESIS_TIMESTAMP = 1_767_225_600n;

const Genesis = z.strictObject({
  /** sha256 over everything that determines the state: compiled fixtures, deploy parameters and code, the build's code, chain id, anvil's version. */
  inputsHash: z.string(),
  pool: z.string(),
  deploymentBlock: z.int(),
  timestamp: z.int(),
});
export type Genesis = z.output<typeof Genesis>;

/**
 * The code the state is made by, hashed as text: the deploy (what is deployed and approved, and how:
 * route kinds, grants, holders) and the build here (its chain, blocks and canonical form). Read only from
 * source (a stale check and `npm run build:genesis`); an installed package trusts its built genesis. The
 * manifest's code too: the genesis comes with the manifest that describes it.
 */
export const GENESIS_CODE: readonly URL[] = ["./deploy.ts", "./genesis.ts", "./manifest.ts"].map((file) => new URL(file, import.meta.url));

/** `code`: the files above (a test passes a changed copy). */
export async function genesisInputsHash(fixtures: CompiledFixtures, levels: number, code: readonly URL[] = GENESIS_CODE, proofs: ProofSystemName = "groth16"): Promise<string> {
  const anvil = (JSON.parse(await readFile(require.resolve("@foundry-rs/anvil/package.json"), "utf8")) as { version: string }).version;
  const sources = Object.fromEntries(await Promise.all(code.map(async (url) => [path.basename(url.pathname), createHash("sha256").update(await readFile(url)).digest("hex")])));
  const inputs = { fixtures: fixtures.sourcesHash, levels, assets: DEV_ASSETS, grant: DEV_TOKEN_GRANT.toString(), timestamp: GENESIS_TIMESTAMP.toString(), anvil, chainId: CHAIN_ID, code: sources, ...(proofs === "dev" ? { proofs } : {}) };
  return createHash("sha256").update(JSON.stringify(inputs)).digest("hex");
}

/**
 * The committed genesis, if it matches these fixtures: always in an installed package (checked when it
 * was built), only when fresh in the repository.
 */
export async function loadGenesis(fixtures: CompiledFixtures, levels: number, proofs: ProofSystemName = "groth16"): Promise<Genesis | undefined> {
  let genesis: Genesis;
  try {
    genesis = Genesis.parse(JSON.parse(await readFile(genesisFiles(proofs).info, "utf8")));
  } catch {
    return undefined;
  }
  if (FROM_SOURCE && genesis.inputsHash !== (await genesisInputsHash(fixtures, levels, GENESIS_CODE, proofs))) return undefined;
  return genesis;
}

/**
 * Deploys the fixtures on a fresh anvil at fixed timestamps and writes its state as the genesis, with the
 * manifest that describes it (the relayer anvil's account 1): a stack from the genesis serves it without
 * describing the chain again, checked against the chain before it answers (buildQueueRuntime).
 */
export async function buildGenesis(fixtures: CompiledFixtures, circuit: CircuitManifest, proofs: ProofSystemName = "groth16"): Promise<Genesis> {
  const { levels } = circuit;
  const files = genesisFiles(proofs);
  const stateDir = await mkdtemp(path.join(tmpdir(), "queue-devstack-genesis-"));
  let chain: Chain | undefined;
  try {
    chain = await startChain({ host: "127.0.0.1", port: 0, stateDir, timestamp: GENESIS_TIMESTAMP });
    const client = createChainClient(chain.rpcUrl);
    const deployer = chain.accounts[0] as DevAccount;
    const deployment = await deployFixtures({
      client,
      fixtures,
      deployerKey: deployer.privateKey,
      holders: chain.accounts.map((a) => a.address),
      levels,
      mineFrom: GENESIS_TIMESTAMP + 12n,
      proofs,
    });
    // With the historical states: a fork of a stack at an earlier block, or a Pool's deployment block
    // found by bisection, reads state as of blocks before the head.
    const dump = (await client.request({ method: "anvil_dumpState", params: [true] } as never)) as string;
    await writeFile(files.state, canonicalState(gunzipSync(Buffer.from(dump.slice(2), "hex"))));
    const block = await client.getBlock({ blockNumber: deployment.deploymentBlock });
    const relayer = (chain.accounts[1] as DevAccount).address;
    await writeFile(files.manifest, manifestBytes(await describeDeployment({ client, pool: deployment.pool, deploymentBlock: deployment.deploymentBlock, fixtures, circuit, relayer })));
    const genesis: Genesis = {
      inputsHash: await genesisInputsHash(fixtures, levels, GENESIS_CODE, proofs),
      pool: deployment.pool,
      deploymentBlock: Number(deployment.deploymentBlock),
      timestamp: Number(block.timestamp),
    };
    await writeFile(files.info, `${JSON.stringify(genesis, null, 2)}\n`);
    return genesis;
  } finally {
    await chain?.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

/**
 * anvil lists blocks, transactions and accounts (an object's keys, in its past states too) in hash-map
 * order: sorted, the same chain is the same bytes.
 */
export function canonicalState(json: Uint8Array): string {
  const state = JSON.parse(new TextDecoder().decode(json)) as { blocks: Array<{ header: { number: string } }>; transactions: Array<{ info: { transaction_hash: string } }> };
  state.blocks.sort((a, b) => Number(BigInt(a.header.number) - BigInt(b.header.number)));
  state.transactions.sort((a, b) => a.info.transaction_hash.localeCompare(b.info.transaction_hash));
  return JSON.stringify(sortedKeys(state));
}

/** The same value with every object's keys in order (anvil reads them by name, in any order). */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]));
}
