import { createHash } from "node:crypto";
import { readdir, readFile, rename, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import type { Abi, Hex } from "viem";

const require = createRequire(import.meta.url);

export const FIXTURES_DIR = fileURLToPath(new URL("../contracts-fixtures/", import.meta.url));
/** Compact compiled output, committed so a fresh clone starts without compiling. */
export const COMPILED_PATH = path.join(FIXTURES_DIR, "compiled.json");

export const FIXTURE_CONTRACTS = ["Pool", "JoinSplitVerifier", "AccountRegistry", "ReceiveDirectory", "TestToken"] as const;
export type FixtureName = (typeof FIXTURE_CONTRACTS)[number];

export interface CompiledContract {
  abi: Abi;
  bytecode: Hex;
  deployedBytecode: Hex;
}

export interface CompiledFixtures {
  /** sha256 over every input of the build: sources, config, compiler and library versions. */
  sourcesHash: string;
  solcVersion: string;
  contracts: Record<FixtureName, CompiledContract>;
}

/** Hashes everything that determines the bytecode, so stale output is detected rather than used. */
export async function fixturesSourcesHash(dir = FIXTURES_DIR): Promise<string> {
  const hash = createHash("sha256");
  const contractsDir = path.join(dir, "contracts");
  const files = (await readdir(contractsDir, { recursive: true })).filter((f) => f.endsWith(".sol")).sort();
  for (const file of files) {
    hash.update(`file:${file.split(path.sep).join("/")}\n`);
    hash.update(await readFile(path.join(contractsDir, file)));
  }
  hash.update(await readFile(path.join(dir, "hardhat.config.ts")));
  for (const pkg of ["solc", "@openzeppelin/contracts"]) {
    const { version } = JSON.parse(await readFile(require.resolve(`${pkg}/package.json`), "utf8")) as { version: string };
    hash.update(`${pkg}@${version}\n`);
  }
  return hash.digest("hex");
}

export type FixturesState = { status: "fresh"; compiled: CompiledFixtures } | { status: "missing" } | { status: "stale"; compiled: CompiledFixtures };

export async function inspectFixtures(dir = FIXTURES_DIR): Promise<FixturesState> {
  let compiled: CompiledFixtures;
  try {
    compiled = JSON.parse(await readFile(path.join(dir, "compiled.json"), "utf8")) as CompiledFixtures;
  } catch {
    return { status: "missing" };
  }
  const complete = FIXTURE_CONTRACTS.every((name) => compiled.contracts?.[name]?.bytecode);
  return complete && compiled.sourcesHash === (await fixturesSourcesHash(dir)) ? { status: "fresh", compiled } : { status: "stale", compiled };
}

/** Compiles the fixtures with Hardhat 3 (solc from npm, offline) and writes compiled.json atomically. */
export async function buildFixtures(): Promise<CompiledFixtures> {
  const sourcesHash = await fixturesSourcesHash();
  const hardhat = path.join(path.dirname(require.resolve("hardhat/package.json")), "dist", "src", "cli.js");
  try {
    await execa(process.execPath, [hardhat, "build", "--quiet", "--config", path.join(FIXTURES_DIR, "hardhat.config.ts")], {
      cwd: FIXTURES_DIR,
      all: true,
    });
  } catch (error) {
    throw new Error(`compiling contracts-fixtures failed:\n${(error as { all?: string }).all ?? (error as Error).message}`);
  }
  const artifactsDir = path.join(FIXTURES_DIR, "artifacts", "contracts-fixtures", "contracts");
  const contracts = {} as Record<FixtureName, CompiledContract>;
  for (const name of FIXTURE_CONTRACTS) {
    const artifact = JSON.parse(await readFile(path.join(artifactsDir, `${name}.sol`, `${name}.json`), "utf8")) as CompiledContract;
    contracts[name] = { abi: artifact.abi, bytecode: artifact.bytecode, deployedBytecode: artifact.deployedBytecode };
  }
  const { version: solcVersion } = JSON.parse(await readFile(require.resolve("solc/package.json"), "utf8")) as { version: string };
  const compiled: CompiledFixtures = { sourcesHash, solcVersion, contracts };
  const tmp = `${COMPILED_PATH}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(compiled, null, 2)}\n`);
  await rename(tmp, COMPILED_PATH);
  return compiled;
}

/** Fresh compiled fixtures: rebuilt first when missing or stale (reported through onRebuild). */
export async function loadFixtures(onRebuild?: (reason: "missing" | "stale") => void): Promise<CompiledFixtures> {
  const state = await inspectFixtures();
  if (state.status === "fresh") return state.compiled;
  onRebuild?.(state.status);
  return buildFixtures();
}
