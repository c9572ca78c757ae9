import { readFile } from "node:fs/promises";
import path from "node:path";
import * as snarkjs from "snarkjs";
import { erc20Abi, type Address, type Hex } from "viem";
import { CIRCUIT_BUILD_DIR } from "../../harness/deployment/index.ts";
import { buildWitness, closeProvers, createAccountKeys, createProver, fetchProofFiles, findNotes, poolAbi, recipientOf, type PreparedTransaction } from "../../harness/client/index.ts";
import { startDevStack } from "../../harness/index.ts";
import { GAS, poolFixture } from "../../test/support/pool.ts";

// Proof generation time in both modes, against witness generation alone in the same run: a real proof
// (full witness + Groth16 prove + the client's local verification; the first in the process beside the
// warm median) and a dev proof (full witness + dev proof + its local check: what a stack started with
// --proofs dev asks of a client); verification alone; and the gas of a deposit, a private send and a
// withdrawal (and of a deposit after more than 100 insertions) against a plain ERC-20 transfer, on a
// real stack.
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const stack = await startDevStack();
try {
  const pool = await poolFixture(stack); // the served proof files, checked, and a prover over them
  const { config, prover, deployment, asset, usdc, sync } = pool;
  const wasm = await readFile(path.join(CIRCUIT_BUILD_DIR, "joinsplit.wasm"));
  const { wallet, public: client, account } = pool.user(1);
  const receipt = async (hash: Hex) => client.waitForTransactionReceipt({ hash });
  const keys = createAccountKeys();

  // Gas.
  const transfer = await receipt(await wallet.writeContract({ address: asset, abi: erc20Abi, functionName: "transfer", args: [stack.accounts[2]?.address as Address, 1n] }));
  const deposit = await pool.deposit(1, keys, usdc("100"));
  const transact = async (tx: PreparedTransaction) =>
    receipt(await wallet.writeContract({ address: config.poolAddress, abi: poolAbi, functionName: "transact", args: [tx.proof, tx.publicInputs, tx.extData], gas: GAS }));
  let state = await sync();
  const [owned] = findNotes(keys, state, deployment.domain);
  const fee = usdc("0.01");
  const sendStarted = performance.now();
  const send = await pool.prove({
    tree: state.tree, keys,
    inputs: [{ note: owned!.note, leafIndex: owned!.leafIndex }],
    outputs: [{ amount: usdc("60"), to: recipientOf(createAccountKeys()) }, { amount: usdc("40") - fee, to: recipientOf(keys) }],
    fee, relayer: account.address,
  });
  const firstProofMs = performance.now() - sendStarted;
  const sendReceipt = await transact(send.transaction);
  state = await sync();
  const change = findNotes(keys, state, deployment.domain).find((n) => !n.spent);
  const withdraw = await pool.prove({
    tree: state.tree, keys,
    inputs: [{ note: change!.note, leafIndex: change!.leafIndex }],
    outputs: [{ amount: usdc("20"), to: recipientOf(keys) }],
    extAmount: -(usdc("20") - 2n * fee), fee, recipient: stack.accounts[3]?.address as Address, relayer: account.address,
  });
  const withdrawReceipt = await transact(withdraw.transaction);
  for (const r of [sendReceipt, withdrawReceipt, deposit]) if (r.status !== "success") throw new Error(`transaction ${r.transactionHash} reverted`);

  // A deposit once the Pool has seen more insertions than a ring of recent roots holds: on a fresh
  // Pool every root write lands in an empty slot, later ones may not, so both figures count.
  await pool.depositBurst(2, 100);
  const lateDeposit = await pool.deposit(1, keys, usdc("1"));

  // Proof time against witness generation alone, alternating, on the same request. The dev prover is
  // made from the same pinned files, bound to this stack's verifier: its cost is the client's alone.
  const request = { deployment, tree: state.tree, keys, asset, inputs: [], outputs: [], fee: 0n };
  const devProver = createProver(await fetchProofFiles(stack.queueUrl, config, pool.reviewed), { ...pool.reviewed, proofSystem: "dev" });
  let t0 = performance.now();
  await devProver.prove(buildWitness(request).signals);
  const firstDevMs = performance.now() - t0;
  // The client's own witness step: circom_runtime's calculator, compiled once and kept (the provers use it).
  const { WitnessCalculatorBuilder } = await import("circom_runtime");
  const calculator = await WitnessCalculatorBuilder(wasm);
  const warmWitnessMs: number[] = [];
  const witnessMs: number[] = [];
  const proofMs: number[] = [];
  const devMs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    t0 = performance.now();
    await devProver.prove(buildWitness(request).signals);
    devMs.push(performance.now() - t0);
    const signals = buildWitness(request).signals;
    let t = performance.now();
    await snarkjs.wtns.calculate(signals, { type: "mem", data: wasm }, { type: "mem" });
    witnessMs.push(performance.now() - t);
    t = performance.now();
    await calculator.calculateWTNSBin(buildWitness(request).signals, false);
    warmWitnessMs.push(performance.now() - t);
    t = performance.now();
    await prover.prove(buildWitness(request).signals);
    proofMs.push(performance.now() - t);
  }
  // The same real proofs on a single-threaded curve (snarkjs takes the process's cached curve): what a
  // test worker that shares the cores with others might use instead of a worker thread per core.
  await closeProvers();
  (globalThis as { curve_bn128?: unknown }).curve_bn128 = await snarkjs.curves.getCurveFromName("bn128", { singleThread: true });
  const singleMs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await prover.prove(buildWitness(request).signals);
    singleMs.push(performance.now() - t);
  }
  await closeProvers();
  // Local verification alone (the prover runs it on every proof before returning it).
  const vk = JSON.parse(await readFile(path.join(CIRCUIT_BUILD_DIR, "verification_key.json"), "utf8"));
  const zkey = await readFile(path.join(CIRCUIT_BUILD_DIR, "joinsplit_final.zkey"));
  const made = await snarkjs.groth16.fullProve(buildWitness(request).signals, { type: "mem", data: wasm }, { type: "mem", data: zkey });
  const verifyMs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    if (!(await snarkjs.groth16.verify(vk, made.publicSignals, made.proof))) throw new Error("the proof does not verify");
    verifyMs.push(performance.now() - t);
  }
  const p = median(proofMs);
  const levels = config.queue.proof.treeDepth;
  const w = median(witnessMs);
  const d = median(devMs);
  console.log(`tree depth ${levels}, ${RUNS} runs each, both modes in this run`);
  console.log(`witness generation alone (snarkjs wtns.calculate) median ${w.toFixed(0)} ms  (baseline)`);
  console.log(`witness, the client's kept calculator            median ${median(warmWitnessMs).toFixed(0)} ms  (${(median(warmWitnessMs) / w).toFixed(2)}x; the real and dev provers compute their witness this way)`);
  console.log(`real proof (witness + Groth16 + local verify)   median ${p.toFixed(0)} ms  (min ${Math.min(...proofMs).toFixed(0)}, max ${Math.max(...proofMs).toFixed(0)}; first in the process ${firstProofMs.toFixed(0)} ms)  ${(p / w).toFixed(1)}x witness`);
  console.log(`real proof, single-threaded curve              median ${median(singleMs).toFixed(0)} ms  (${(median(singleMs) / p).toFixed(2)}x the default, a worker thread per core)  ${(median(singleMs) / w).toFixed(1)}x witness`);
  console.log(`dev proof  (witness + dev proof + local check)  median ${d.toFixed(0)} ms  (min ${Math.min(...devMs).toFixed(0)}, max ${Math.max(...devMs).toFixed(0)}; first in the process ${firstDevMs.toFixed(0)} ms)  ${(d / w).toFixed(2)}x witness`);
  console.log(`local verification alone (Groth16)              median ${median(verifyMs).toFixed(0)} ms`);
  const t = Number(transfer.gasUsed);
  for (const [name, r] of [["deposit", deposit], ["private send", sendReceipt], ["withdrawal", withdrawReceipt], ["deposit, 104th insertion", lateDeposit]] as const) {
    console.log(`gas ${name.padEnd(25)} ${String(r.gasUsed).padStart(9)}  (${(Number(r.gasUsed) / t).toFixed(1)}x an ERC-20 transfer)`);
  }
  console.log(`gas ${"ERC-20 transfer".padEnd(25)} ${String(transfer.gasUsed).padStart(9)}  (baseline)`);
} finally {
  await closeProvers();
  await stack.stop();
}
