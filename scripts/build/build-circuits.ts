// DEV-ONLY build of the join-split circuit: compile, Groth16 setup, ONE local zkey contribution,
// verification key, Solidity verifier, manifest. The resulting keys are INSECURE by construction
// (single local contributor, toxic waste not verifiably destroyed): never use them with real funds.
//
//   node --experimental-strip-types scripts/build/build-circuits.ts [options]
//
//   --levels N          tree depth (default: the one in joinsplit.circom's `component main`; another
//                       value compiles a patched copy in the work dir, for depth experiments)
//   --out DIR           artifact dir (default contracts-fixtures/circuits/build)
//   --sol PATH          Solidity verifier path (default contracts-fixtures/contracts/JoinSplitVerifier.sol
//                       when --out is not given, else DIR/JoinSplitVerifier.sol)
//   --work DIR          scratch dir for r1cs/sym/initial zkey (default $TMPDIR/queue-devstack-circuits/levels-N)
//   --skip-zkey-verify  skip `zkey verify` of the final zkey against r1cs + ptau (saves ~30 s of ~70 s)
//   --generate-ptau     if the ptau is missing, generate one locally (slow: see below)
//
//   env PTAU            powers-of-tau file, prepared for phase 2, power >= the circuit's
//                       (default contracts-fixtures/circuits/ptau/pot15_final.ptau, not committed)

import { createHash, randomBytes } from "node:crypto";
import { spawnSync } from "node:child_process";
import { copyFile, mkdir, open, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { buildPoseidon } from "circomlibjs";
import * as snarkjs from "snarkjs";
import { keccak256, stringToBytes } from "viem";
import { renderSolidityVerifier } from "../../harness/deployment/index.ts";

const repoRoot = path.resolve(import.meta.dirname, "..", "..");
// Package dirs (snarkjs's package.json "exports" hides its templates/ and package.json from require.resolve).
const pkgDir = (name: string): string => path.join(repoRoot, "node_modules", name);
const pkgVersion = async (name: string): Promise<string> => JSON.parse(await readFile(path.join(pkgDir(name), "package.json"), "utf8")).version;
const circuitsDir = path.join(repoRoot, "contracts-fixtures/circuits");
const circuitSrc = path.join(circuitsDir, "joinsplit.circom");
const defaultOut = path.join(circuitsDir, "build");
const defaultSol = path.join(repoRoot, "contracts-fixtures/contracts/JoinSplitVerifier.sol");
const MAIN_RE = /^component main \{public \[[^\]]*\]\} = JoinSplit\((\d+), (\d+), (\d+)\);$/m;
// Public inputs in the order of snarkjs publicSignals / the verifier's input array (checked against
// the compiled circuit's symbol table below).
const PUBLIC_INPUTS = [
  "root",
  "publicAmount",
  "extDataHash",
  "asset",
  "domain",
  "inputNullifier[0]",
  "inputNullifier[1]",
  "outputCommitment[0]",
  "outputCommitment[1]",
];
const FIELD = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
const MIN_PTAU_POWER = 15;
// Wall time of new + contribute + prepare phase2 on the 2-core dev machine with snarkjs 0.7.6
// (2^15: ~11 min measured; prepare phase2 dominates and roughly doubles per power).
const PTAU_MINUTES: Record<number, string> = { 14: "~5-8", 15: "~10-15", 16: "~30", 17: "~60" };

const { values: args } = parseArgs({
  options: {
    levels: { type: "string" },
    out: { type: "string" },
    sol: { type: "string" },
    work: { type: "string" },
    "skip-zkey-verify": { type: "boolean", default: false },
    "generate-ptau": { type: "boolean", default: false },
  },
});

const logger = {
  debug: (_msg: string) => {},
  info: (msg: string) => console.log(`      ${msg}`),
  warn: (msg: string) => console.warn(`      WARN ${msg}`),
  error: (msg: string) => console.error(`      ERROR ${msg}`),
};

const t00 = performance.now();
async function step<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
  console.log(`==> ${name}`);
  const t0 = performance.now();
  const r = await fn();
  console.log(`    done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return r;
}

async function fileInfo(file: string): Promise<{ sha256: string; bytes: number }> {
  const buf = await readFile(file);
  return { sha256: createHash("sha256").update(buf).digest("hex"), bytes: buf.length };
}

// Reads the header of a .ptau file: its power and which sections it has (12..15 = prepared for phase 2).
async function readPtauHeader(file: string): Promise<{ power: number; prepared: boolean }> {
  const fh = await open(file, "r");
  try {
    const head = Buffer.alloc(12);
    await fh.read(head, 0, 12, 0);
    if (head.toString("latin1", 0, 4) !== "ptau") throw new Error(`${file} is not a .ptau file`);
    const nSections = head.readUInt32LE(8);
    const sections = new Map<number, number>();
    let pos = 12;
    for (let i = 0; i < nSections; i++) {
      const sh = Buffer.alloc(12);
      await fh.read(sh, 0, 12, pos);
      const type = sh.readUInt32LE(0);
      const size = Number(sh.readBigUInt64LE(4));
      sections.set(type, pos + 12);
      pos += 12 + size;
    }
    const h1 = sections.get(1);
    if (h1 === undefined) throw new Error(`${file}: no header section`);
    const b = Buffer.alloc(4);
    await fh.read(b, 0, 4, h1);
    const n8 = b.readUInt32LE(0);
    await fh.read(b, 0, 4, h1 + 4 + n8);
    return { power: b.readUInt32LE(0), prepared: [12, 13, 14, 15].every((s) => sections.has(s)) };
  } finally {
    await fh.close();
  }
}

async function main(): Promise<void> {
  const src = await readFile(circuitSrc, "utf8");
  const m = MAIN_RE.exec(src);
  if (!m) throw new Error(`cannot find \`component main ... = JoinSplit(levels, 2, 2);\` in ${circuitSrc}`);
  const fileLevels = Number(m[1]);
  const [nIns, nOuts] = [Number(m[2]), Number(m[3])];
  if (nIns !== 2 || nOuts !== 2) throw new Error("the manifest and the check script assume JoinSplit(levels, 2, 2)");
  const levels = args.levels === undefined ? fileLevels : Number(args.levels);
  if (!Number.isInteger(levels) || levels < 1 || levels > 32) throw new Error(`bad --levels ${args.levels}`);
  const outDir = path.resolve(args.out ?? defaultOut);
  const solPath = path.resolve(args.sol ?? (args.out === undefined ? defaultSol : path.join(outDir, "JoinSplitVerifier.sol")));
  const workDir = path.resolve(args.work ?? path.join(os.tmpdir(), "queue-devstack-circuits", `levels-${levels}`));
  console.log(`joinsplit: levels=${levels} nIns=${nIns} nOuts=${nOuts}\n  out:  ${outDir}\n  sol:  ${solPath}\n  work: ${workDir}`);
  // Start from a clean scratch dir, but never wipe a user-chosen one.
  if (args.work === undefined) await rm(workDir, { recursive: true, force: true });
  await mkdir(workDir, { recursive: true });
  await mkdir(outDir, { recursive: true });

  // 1. Compile. A depth other than the file's is compiled from a patched copy (same file name, so
  //    the outputs are still joinsplit.*); helper includes resolve through -l circuitsDir.
  let compileSrc = circuitSrc;
  if (levels !== fileLevels) {
    compileSrc = path.join(workDir, "joinsplit.circom");
    await writeFile(compileSrc, src.replace(MAIN_RE, (line) => line.replace(/JoinSplit\(\d+,/, `JoinSplit(${levels},`)));
  }
  const circom = path.join(pkgDir("circom2"), "cli.js");
  await step("compile (circom2, --O2)", () => {
    const r = spawnSync(
      process.execPath,
      [circom, compileSrc, "--r1cs", "--wasm", "--sym", "--O2", "-l", path.join(repoRoot, "node_modules"), "-l", circuitsDir, "-o", workDir],
      { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" },
    );
    for (const line of r.stdout.split("\n")) if (line.trim()) console.log(`      ${line.replace(/\x1b\[[0-9;]*m/g, "")}`);
    if (r.status !== 0) throw new Error(`circom2 exited with ${r.status}`);
  });
  const r1csFile = path.join(workDir, "joinsplit.r1cs");
  const wasmFile = path.join(workDir, "joinsplit_js", "joinsplit.wasm");

  const r1cs = await step("r1cs info", async () => {
    const cir = await snarkjs.r1cs.info(r1csFile);
    console.log(`      constraints ${cir.nConstraints}, wires ${cir.nVars}, public inputs ${cir.nPubInputs}, outputs ${cir.nOutputs}`);
    return { nConstraints: cir.nConstraints as number, nVars: cir.nVars as number, nPubInputs: cir.nPubInputs as number, nOutputs: cir.nOutputs as number };
  });
  // snarkjs: domain = 2^power with power = floor(log2(nConstraints + nPub + nOut)) + 1.
  const circuitPower = Math.floor(Math.log2(r1cs.nConstraints + r1cs.nPubInputs + r1cs.nOutputs)) + 1;

  await step("check public-input order (symbol table)", async () => {
    if (r1cs.nOutputs !== 0 || r1cs.nPubInputs !== PUBLIC_INPUTS.length) {
      throw new Error(`expected 0 outputs and ${PUBLIC_INPUTS.length} public inputs, got ${r1cs.nOutputs} / ${r1cs.nPubInputs}`);
    }
    const names = new Map<number, string>();
    for (const line of (await readFile(path.join(workDir, "joinsplit.sym"), "utf8")).split("\n")) {
      const [, wire, , name] = line.split(",");
      if (name?.startsWith("main.") && Number(wire) >= 1 && Number(wire) <= PUBLIC_INPUTS.length) names.set(Number(wire), name.slice(5));
    }
    const got = PUBLIC_INPUTS.map((_, i) => names.get(i + 1));
    if (JSON.stringify(got) !== JSON.stringify(PUBLIC_INPUTS)) throw new Error(`public inputs are ${JSON.stringify(got)}`);
    console.log(`      ${got.join(", ")}`);
  });

  // 2. Powers of tau.
  const ptauPower = Math.max(MIN_PTAU_POWER, circuitPower);
  const ptauFile = path.resolve(process.env.PTAU ?? path.join(circuitsDir, "ptau", `pot${ptauPower}_final.ptau`));
  if (!existsSync(ptauFile)) {
    const estimate = `${PTAU_MINUTES[ptauPower] ?? "well over 60"} minutes`;
    if (!args["generate-ptau"]) {
      console.error(
        `\nNo powers-of-tau file at ${ptauFile}.\n` +
          `The circuit needs power >= ${circuitPower} (${r1cs.nConstraints} constraints). Either set PTAU=/path/to/a ` +
          `phase2-prepared .ptau of power >= ${circuitPower}, or re-run with --generate-ptau to make a DEV-ONLY 2^${ptauPower} ` +
          `one locally: that takes ${estimate} on a 2-core machine (mostly "prepare phase2").`,
      );
      process.exitCode = 2;
      return;
    }
    await step(`generate DEV-ONLY ptau 2^${ptauPower} (${estimate})`, async () => {
      await mkdir(path.dirname(ptauFile), { recursive: true });
      const p0 = path.join(workDir, "pot_0.ptau");
      const p1 = path.join(workDir, "pot_1.ptau");
      const curve = await snarkjs.curves.getCurveFromName("bn128");
      await snarkjs.powersOfTau.newAccumulator(curve, ptauPower, p0, logger);
      await snarkjs.powersOfTau.contribute(p0, p1, "queue-devstack DEV-ONLY ptau", randomBytes(32).toString("hex"), logger);
      await snarkjs.powersOfTau.preparePhase2(p1, ptauFile, logger);
      await rm(p0);
      await rm(p1);
    });
  }
  const ptau = await step("check ptau", async () => {
    const h = await readPtauHeader(ptauFile);
    console.log(`      ${ptauFile}: power ${h.power}, prepared for phase 2: ${h.prepared}; circuit needs ${circuitPower}`);
    if (!h.prepared) throw new Error("the ptau is not prepared for phase 2 (snarkjs powersoftau prepare phase2)");
    if (h.power < circuitPower) throw new Error(`the ptau is too small: power ${h.power} < ${circuitPower}`);
    return { ...h, ...(await fileInfo(ptauFile)) };
  });

  // 3. Groth16 setup + ONE dev-only contribution.
  const zkey0 = path.join(workDir, "joinsplit_0000.zkey");
  const zkeyFinal = path.join(workDir, "joinsplit_final.zkey");
  await step("groth16 setup (zkey new)", async () => {
    const r = await snarkjs.zKey.newZKey(r1csFile, ptauFile, zkey0, logger);
    if (r === -1) throw new Error("zkey new failed");
  });
  const contributionHash = await step("zkey contribute (ONE local dev-only contribution, random entropy)", async () => {
    const entropy = randomBytes(64).toString("hex");
    const h: Uint8Array = await snarkjs.zKey.contribute(zkey0, zkeyFinal, "queue-devstack DEV-ONLY INSECURE contribution", entropy, logger);
    return Buffer.from(h).toString("hex");
  });
  if (!args["skip-zkey-verify"]) {
    await step("zkey verify (final zkey vs r1cs + ptau)", async () => {
      if (!(await snarkjs.zKey.verifyFromR1cs(r1csFile, ptauFile, zkeyFinal, logger))) throw new Error("zkey verification failed");
    });
  }

  // 4. Exports.
  const vkFile = path.join(outDir, "verification_key.json");
  await step("export verification key", async () => {
    const vk = await snarkjs.zKey.exportVerificationKey(zkeyFinal, logger);
    await writeFile(vkFile, JSON.stringify(vk, null, 1) + "\n");
  });
  await step("export Solidity verifier", async () => {
    await mkdir(path.dirname(solPath), { recursive: true });
    await writeFile(solPath, await renderSolidityVerifier(zkeyFinal, levels, PUBLIC_INPUTS));
  });

  // 5. Artifacts + manifest.
  await step("copy artifacts + write manifest", async () => {
    await copyFile(wasmFile, path.join(outDir, "joinsplit.wasm"));
    await copyFile(zkeyFinal, path.join(outDir, "joinsplit_final.zkey"));
    const files = [];
    for (const f of ["joinsplit.wasm", "joinsplit_final.zkey", "verification_key.json"]) files.push({ file: f, ...(await fileInfo(path.join(outDir, f))) });
    const r1csInfo = await fileInfo(r1csFile);
    const solInfo = await fileInfo(solPath);
    const solRel = solPath.startsWith(repoRoot + path.sep) ? path.relative(repoRoot, solPath) : solPath;
    // Merkle zero values (Tornado Nova's convention), for the Solidity tree and the TS client.
    const poseidon = await buildPoseidon();
    const zeros = [BigInt(keccak256(stringToBytes("tornado"))) % FIELD];
    for (let i = 0; i < levels; i++) zeros.push(poseidon.F.toObject(poseidon([zeros[i], zeros[i]])));
    const hex32 = (x: bigint): string => "0x" + x.toString(16).padStart(64, "0");
    const manifest = {
      circuit: "joinsplit",
      template: `JoinSplit(${levels}, ${nIns}, ${nOuts})`,
      generatedBy: "scripts/build-circuits.ts",
      WARNING: "DEV-ONLY, INSECURE trusted setup (single local contributor, toxic waste not verifiably destroyed)",
      levels,
      nIns,
      nOuts,
      constraints: r1cs.nConstraints,
      wires: r1cs.nVars,
      domainSizeLog2: circuitPower,
      publicInputs: PUBLIC_INPUTS,
      merkle: {
        node: "Poseidon2(left, right)",
        zeroLeaf: 'uint256(keccak256("tornado")) % p',
        zeros: zeros.map(hex32),
        note: "zeros[0] = zero leaf, zeros[i+1] = Poseidon2(zeros[i], zeros[i]); zeros[levels] = root of the empty tree",
      },
      files,
      // Repo-relative when inside the repo (the default), else absolute.
      solidityVerifier: { file: solRel, contract: "JoinSplitVerifier", ...solInfo },
      notCommitted: {
        r1cs: { file: "joinsplit.r1cs", ...r1csInfo },
        ptau: { file: path.basename(ptauFile), power: ptau.power, sha256: ptau.sha256, bytes: ptau.bytes },
      },
      zkeyContributionHash: contributionHash,
      tools: { circom2: await pkgVersion("circom2"), snarkjs: await pkgVersion("snarkjs"), circomlib: await pkgVersion("circomlib"), circomOptimization: "--O2" },
    };
    await writeFile(path.join(outDir, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
    for (const f of [...files, { file: solRel, bytes: solInfo.bytes }, { file: "(work) joinsplit.r1cs", bytes: r1csInfo.bytes }]) {
      console.log(`      ${f.file}: ${f.bytes} bytes`);
    }
  });
  console.log(`all done in ${((performance.now() - t00) / 1000).toFixed(1)} s`);
}

try {
  await main();
} catch (e) {
  console.error(e);
  process.exitCode = 1;
} finally {
  await (globalThis as any).curve_bn128?.terminate();
}
