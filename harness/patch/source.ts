import { existsSync } from "node:fs";
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { contractLayout, FROM_SOURCE, PACKAGE_ROOT, type ContractLayout, type SolcOutput } from "../deployment/index.ts";
import { PatchError } from "./errors.ts";
import { solidityProject, type SolidityProject } from "./project.ts";

/**
 * The compiler settings a .sol patch is compiled with: contracts-fixtures/hardhat.config.ts's (the
 * deployed fixtures' own), with the outputs a patch is checked by.
 */
export const PATCH_SOLC_SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  metadata: { bytecodeHash: "none", appendCBOR: false },
  evmVersion: "cancun",
  outputSelection: { "*": { "*": ["evm.deployedBytecode.object", "evm.deployedBytecode.immutableReferences", "storageLayout"], "": ["ast"] } },
} as const;

// Found from the package's folder, not from this module: the installed CLI is one bundled file
// (scripts/build/build-cli.ts) in dist/scripts/cli/, while the worker stays tsc's module in dist/harness/patch/.
const WORKER = FROM_SOURCE ? path.join(PACKAGE_ROOT, "harness", "patch", "compile-worker.ts") : path.join(PACKAGE_ROOT, "dist", "harness", "patch", "compile-worker.js");

/** `file` or `file:Contract` (solc's own way to name one contract of a file). */
function splitContract(input: string): { file: string; contract: string | undefined } {
  const at = input.lastIndexOf(":");
  if (at > 1 && /^[A-Za-z_$][\w$]*$/.test(input.slice(at + 1)) && !existsSync(input)) return { file: input.slice(0, at), contract: input.slice(at + 1) };
  return { file: input, contract: undefined };
}

/**
 * The code a patch brings, with what it is checked by: a .sol file compiled here (the npm solc, offline),
 * a Hardhat artifact (with its build-info, found beside it), a build-info, or solc's standard-JSON output.
 * `prefer`: the deployed contract's name, chosen when the input holds several contracts.
 */
export async function readPatchSource(input: string, prefer: string): Promise<ContractLayout> {
  const { file, contract } = splitContract(input);
  const absolute = path.resolve(file);
  const stats = await stat(absolute).catch(() => null);
  if (!stats) throw new PatchError("patch_source_invalid", `${file}: no such file`);
  if (!stats.isFile()) throw new PatchError("patch_source_invalid", `${file}: not a file`);
  // The file is anyone's: whatever it holds, a refusal that names it, never a 500.
  const layout = await readSource(absolute, file, contract, prefer).catch((error: unknown) => {
    if (error instanceof PatchError) throw error;
    throw new PatchError(absolute.endsWith(".sol") ? "compile_failed" : "patch_source_invalid", `${file}: ${(error as Error).message ?? String(error)}`);
  });
  // solc leaves a placeholder (__$…$__) where a linked library's address goes: not code anvil can run.
  if (!/^0x(?:[0-9a-fA-F]{2})*$/.test(layout.deployedBytecode)) {
    throw new PatchError("patch_source_invalid", `${file}: ${layout.contractName}'s code is not linked (it calls a library whose address is left as a placeholder): link it, or make the library's functions internal`);
  }
  return layout;
}

async function readSource(absolute: string, file: string, contract: string | undefined, prefer: string): Promise<ContractLayout> {
  if (absolute.endsWith(".sol")) return compileSol(absolute, contract, prefer);
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(await readFile(absolute, "utf8")) as Record<string, unknown>;
  } catch (error) {
    throw new PatchError("patch_source_invalid", `${file}: not a .sol file nor JSON (${(error as Error).message})`);
  }
  if (typeof json !== "object" || json === null) throw new PatchError("patch_source_invalid", `${file}: not a Hardhat artifact, build-info or compiler output (not a JSON object)`);
  // A Hardhat artifact: its storage layout and immutables' names are in the build-info it points to.
  if (typeof json.contractName === "string" && typeof json.deployedBytecode === "string") {
    const output = await artifactBuildInfo(absolute, json);
    if (!output) throw new PatchError("patch_source_invalid", `${file}: a Hardhat artifact without its build-info (its storage layout and immutables' names are there): patch with the build-info, or the .sol file`);
    return pick(output, file, contract ?? json.contractName, prefer, typeof json.inputSourceName === "string" ? json.inputSourceName : (json.sourceName as string | undefined));
  }
  const output = (typeof json.output === "object" && json.output !== null ? json.output : json) as SolcOutput;
  if (typeof output.contracts !== "object" || output.contracts === null) {
    throw new PatchError("patch_source_invalid", `${file}: not a Hardhat artifact, build-info or compiler output (no contracts in it)`);
  }
  return pick(output, file, contract, prefer);
}

/** A Hardhat 3 artifact's build-info output (build-info/<id>.output.json, in a folder above it), or Hardhat 2's (its .dbg.json names it). */
async function artifactBuildInfo(artifact: string, json: Record<string, unknown>): Promise<SolcOutput | undefined> {
  const candidates: string[] = [];
  if (typeof json.buildInfoId === "string") {
    for (let dir = path.dirname(artifact); path.dirname(dir) !== dir; dir = path.dirname(dir)) candidates.push(path.join(dir, "build-info", `${json.buildInfoId}.output.json`));
  }
  const dbg = artifact.replace(/\.json$/, ".dbg.json");
  if (existsSync(dbg)) {
    const { buildInfo } = JSON.parse(await readFile(dbg, "utf8")) as { buildInfo?: string };
    if (buildInfo) candidates.push(path.resolve(path.dirname(dbg), buildInfo));
  }
  const found = candidates.find((c) => existsSync(c));
  return found ? (JSON.parse(await readFile(found, "utf8")) as { output: SolcOutput }).output : undefined;
}

/** The one contract of an output meant: named, the only one with code, or the deployed one's namesake. */
function pick(output: SolcOutput, file: string, contract: string | undefined, prefer: string, inSource?: string): ContractLayout {
  const all = Object.entries(output.contracts ?? {}).flatMap(([source, contracts]) =>
    Object.entries(contracts).filter(([, c]) => (c.evm?.deployedBytecode?.object ?? "").replace(/^0x/, "").length > 0).map(([name]) => ({ source, name })),
  );
  const inFile = inSource === undefined ? all : all.filter((c) => c.source === inSource);
  const named = contract === undefined ? inFile : inFile.filter((c) => c.name === contract);
  const chosen = named.length === 1 ? named[0] : named.find((c) => c.name === prefer);
  if (!chosen) {
    const names = inFile.map((c) => c.name);
    const listed = `${names.slice(0, 6).join(", ")}${names.length > 6 ? `, and ${names.length - 6} more` : ""}`;
    throw new PatchError(
      "patch_source_invalid",
      contract !== undefined ? `${file} has no contract ${contract}${names.length ? ` (it has ${listed})` : ""}` : names.length === 0 ? `${file} holds no contract with code` : `${file} holds several contracts (${listed}): name one, as ${file}:${names[0]}`,
    );
  }
  const layout = contractLayout(output, chosen.source, chosen.name);
  if (typeof layout === "string") throw new PatchError("patch_source_invalid", `${file}: ${layout}`);
  return layout;
}

/** A compile's output, while the files it read are unchanged: patching the same source again (a bisect, a reset and retry) skips the compiler. */
const compiled = new Map<string, { files: Map<string, string>; output: string }>();
const digest = (file: string) => readFile(file, "utf8").then((text) => createHash("sha256").update(text).digest("hex"), () => "gone");
const KEPT_COMPILES = 16;

async function compileOnce(project: SolidityProject, unit: string): Promise<{ output: string } | { missingSolc: true }> {
  // The project's remappings and libs are part of the key: an edited remappings.txt compiles again.
  const key = JSON.stringify([project, unit]);
  const cached = compiled.get(key);
  if (cached && (await Promise.all([...cached.files].map(async ([file, hash]) => (await digest(file)) === hash))).every(Boolean)) return { output: cached.output };
  const answer = await new Promise<{ output: string; read: Array<[string, string]> } | { missingSolc: true }>((resolve, reject) => {
    const settings = { ...PATCH_SOLC_SETTINGS, remappings: project.remappings };
    const worker = new Worker(WORKER, { workerData: { base: project.root, libs: project.libs, unit, cwd: process.cwd(), settings } });
    worker.once("message", resolve);
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the compiler's worker exited (${code})`)));
  });
  if ("read" in answer) {
    compiled.delete(key);
    compiled.set(key, { output: answer.output, files: new Map(answer.read) });
    if (compiled.size > KEPT_COMPILES) compiled.delete(compiled.keys().next().value as string);
  }
  return answer;
}

async function compileSol(file: string, contract: string | undefined, prefer: string): Promise<ContractLayout> {
  const project = solidityProject(file);
  const unit = path.relative(project.root, file).split(path.sep).join("/");
  const answer = await compileOnce(project, unit);
  if ("missingSolc" in answer) throw new PatchError("compile_failed", `${unit}: compiling a .sol file needs the npm solc package (npm install -D solc@0.8.30), or patch with a Hardhat artifact`);
  const output = JSON.parse(answer.output) as SolcOutput & { errors?: Array<{ severity: string; type: string; message: string; formattedMessage?: string }> };
  const error = output.errors?.find((e) => e.severity === "error");
  if (error) {
    const at = /-->\s*(\S+?:\d+:\d+)/.exec(error.formattedMessage ?? "")?.[1] ?? unit;
    // Unit names are relative to the project's root; with no project around the file, that is the filesystem's.
    const where = project.root === path.parse(project.root).root ? `${project.root}${at}` : at;
    throw new PatchError("compile_failed", `${where}: ${error.type}: ${error.message}`);
  }
  return pick(output, unit, contract, prefer, unit);
}
