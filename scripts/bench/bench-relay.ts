import { writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { createPublicClient, encodeFunctionData, http, toFunctionSelector, type TransactionReceipt } from "viem";
import { closeProvers, createQueueClient, poolAbi, reviewedFrom, type PreparedTransaction } from "../../harness/client/index.ts";
import { jsonRpc } from "../../harness/chain/index.ts";
import { startDevStack, type DevStack } from "../../harness/index.ts";
import { sepoliaAt } from "../../src/chain/client.ts";
import { nodeFetch, nodeFetchHooks } from "../../src/chain/node-fetch.ts";
import { DEFAULT_RELAY_SETTINGS } from "../../src/config/relay-settings.ts";
import { poolFixture } from "../../test/support/pool.ts";
import { depositedNotes, GAS, nodeCpuMs, QueuePathError, queueBurst as burstThroughQueue, sendFee } from "./relay-load.ts";
import { cpuMs, median, percentile } from "./stats.ts";

// Sustained relay throughput through the queue (POST /send-relay, polled until `confirmed`) against
// the same kind of transactions sent straight to Pool.transact by one account, in the same run on one
// local stack (automine). Every transaction spends one distinct deposited note (the other input is a
// dummy), so no two share a nullifier; all 2N proofs are made before anything is timed.
//
// Every proof is made against the tree right after the deposits; the Pool accepts any root it ever
// had, so the relayed and direct transactions that follow do not invalidate it. A burst lasts well under
// a second, so BENCH_ROUNDS bursts of each are timed, alternating, and the medians compared.
const N = Number(process.env.BENCH_RELAYS ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
if (!Number.isInteger(N) || N < 1) {
  console.error(`BENCH_RELAYS must be a positive integer, got ${process.env.BENCH_RELAYS}`);
  process.exit(2);
}
// Relays one at a time after the burst: the latency of a single operation on an idle queue.
const SINGLE = Number(process.env.BENCH_SINGLE ?? 8);
const SINGLE_POLL_MS = 10;
// BENCH_RPC_COUNT=1: also print the JSON-RPC calls per transaction by method, of the runtime (through
// the stack's fault proxy) on the queue path and of this script on the direct one. Off by default: the
// counting parses every request body, which this process's CPU figure would include.
const COUNT_RPC = process.env.BENCH_RPC_COUNT === "1";
// BENCH_CPU_PROFILE=<file>: V8 CPU profiles of this process during the bursts (set-up left out), one a burst:
// <file>.queue.<round>.cpuprofile and <file>.direct.<round>.cpuprofile.
const CPU_PROFILE = process.env.BENCH_CPU_PROFILE;
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 50);
const TIMEOUT_MS = 120_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (x: number) => `${x.toFixed(0)} ms`;

let stack: DevStack | undefined;
try {
  stack = await startDevStack({ logger: process.env.DEVSTACK_LOG ? { level: process.env.DEVSTACK_LOG } : false });
  const setupStarted = performance.now();
  const pool = await poolFixture(stack); // the served proof files, checked, and a prover over them
  const { config, asset } = pool;
  const direct = pool.user(3);
  // Both paths' clients on the same transport, node:http on kept-alive sockets (the runtime's own
  // nodeFetch): fetch's machinery cost each status poll and receipt poll about twice its CPU.
  const chain = createPublicClient({ chain: sepoliaAt(stack.rpcUrl), transport: http(stack.rpcUrl, { fetchFn: nodeFetch }) });

  // Set-up (untimed): one approval, 2N deposits to one set of keys, one sync, 2N proofs. The same
  // private send for both paths, its fee paid to the stack's relayer through the queue, to the direct
  // account itself on the baseline: same calldata shape, same token transfers.
  const queue = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(config), fetch: nodeFetch });
  const queueConfig = await queue.beforePrepare();
  const { notes, prove } = await depositedNotes(pool, 2 * N * ROUNDS + SINGLE, sendFee(queueConfig, asset));
  const rounds: Array<{ queued: PreparedTransaction[]; baseline: PreparedTransaction[] }> = [];
  const proveStarted = performance.now();
  let next = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const round = { queued: [] as PreparedTransaction[], baseline: [] as PreparedTransaction[] };
    for (let i = 0; i < N; i++) {
      round.queued.push(await prove(notes[next++] as (typeof notes)[number], stack.relayer.address));
      round.baseline.push(await prove(notes[next++] as (typeof notes)[number], direct.account.address));
    }
    rounds.push(round);
  }
  const singles: PreparedTransaction[] = [];
  for (let i = 0; i < SINGLE; i++) singles.push(await prove(notes[next++] as (typeof notes)[number], stack.relayer.address));
  const proveMs = performance.now() - proveStarted;
  const setupMs = performance.now() - setupStarted;

  const rpc = COUNT_RPC ? countRpcCalls([stack.faults.rpcUrl, stack.rpcUrl]) : undefined;
  const chainPid = stack.chainPid;
  type Cpu = { anvil: number | null; node: number };
  /** The CPU anvil and this process used while `work` ran. */
  const measured = async <T>(work: () => Promise<T>): Promise<T & { cpu: Cpu }> => {
    const before = { anvil: cpuMs(chainPid), node: nodeCpuMs() };
    const result = await work();
    const after = cpuMs(chainPid);
    return { ...result, cpu: { anvil: after === null || before.anvil === null ? null : after - before.anvil, node: nodeCpuMs() - before.node } };
  };

  // 1. Through the queue: all N submitted at once, each polled until terminal.
  const queueBurst = (txs: PreparedTransaction[]) => burstThroughQueue(queue, queueConfig, txs, { intervalMs: POLL_MS, timeoutMs: TIMEOUT_MS });

  // 2. Baseline: the same kind of transactions straight to Pool.transact from one account, signed
  // locally with explicit nonces, gas and fees, all sent, then every receipt awaited.
  const directBurst = async (txs: PreparedTransaction[]) => {
    const started = performance.now();
    const fees = await chain.estimateFeesPerGas();
    let directNonce = await chain.getTransactionCount({ address: direct.account.address, blockTag: "pending" });
    const receipts: Array<Promise<{ receipt: TransactionReceipt; latencyMs: number; doneAt: number }>> = [];
    for (const tx of txs) {
      const t0 = performance.now();
      const raw = await direct.account.signTransaction({
        type: "eip1559", chainId: config.chainId, nonce: directNonce++, to: config.poolAddress, value: 0n, gas: GAS,
        data: encodeFunctionData({ abi: poolAbi, functionName: "transact", args: [tx.proof, tx.publicInputs, tx.extData] }),
        maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      });
      const hash = await chain.sendRawTransaction({ serializedTransaction: raw });
      receipts.push(
        (async () => {
          for (;;) {
            const receipt = await chain.getTransactionReceipt({ hash }).catch(() => undefined);
            if (receipt) return { receipt, latencyMs: performance.now() - t0, doneAt: performance.now() };
            if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`direct transaction ${hash} not mined within ${TIMEOUT_MS} ms`);
            await sleep(POLL_MS);
          }
        })(),
      );
    }
    const mined = await Promise.all(receipts);
    const reverted = mined.filter((m) => m.receipt.status !== "success");
    if (reverted.length > 0) throw new Error(`${reverted.length} direct transactions reverted: ${reverted.map((m) => m.receipt.transactionHash).join(", ")}`);
    return { mined, ms: Math.max(...mined.map((m) => m.doneAt)) - started };
  };

  const queueRuns: Array<Awaited<ReturnType<typeof queueBurst>> & { cpu: Cpu }> = [];
  const directRuns: Array<Awaited<ReturnType<typeof directBurst>> & { cpu: Cpu }> = [];
  const profiler = CPU_PROFILE ? await startProfiler() : undefined;
  for (const round of rounds) {
    rpc?.phase("queue");
    await profiler?.resume();
    queueRuns.push(await measured(() => queueBurst(round.queued)));
    await profiler?.pause("queue");
    rpc?.phase("direct");
    await profiler?.resume();
    directRuns.push(await measured(() => directBurst(round.baseline)));
    await profiler?.pause("direct");
  }
  rpc?.phase(undefined);
  if (profiler && CPU_PROFILE) await profiler.save(CPU_PROFILE);

  // 3. What anvil spends on a relay's admission simulation (eth_call of Pool.transact from the relayer at
  // "latest", as the runtime asks it) and on its verifier's part of it (the same call with the verifier's
  // code overridden to answer true), each call repeated: the singles' proofs, not yet sent.
  const simulation = SINGLE > 0 ? await simulationCost(singles) : undefined;

  // 4. One at a time on the idle queue: a single operation's latency, submit to confirmed.
  const single: number[] = [];
  for (const tx of singles) {
    const t0 = performance.now();
    const accepted = await queue.submit("send", queueConfig, tx);
    const op = await queue.waitFor("send", accepted.id, { intervalMs: SINGLE_POLL_MS, timeoutMs: TIMEOUT_MS });
    if (op.state !== "confirmed") throw new QueuePathError(`single operation ${op.id} ended ${op.state}`);
    single.push(performance.now() - t0);
  }

  const tps = (run: { ms: number }) => N / (run.ms / 1000);
  const queueTps = median(queueRuns.map(tps));
  const directTps = median(directRuns.map(tps));
  const relayed = queueRuns.flatMap((run) => run.relayed);
  const qLat = relayed.map((r) => r.latencyMs);
  const dLat = directRuns.flatMap((run) => run.mined.map((m) => m.latencyMs));
  const s = DEFAULT_RELAY_SETTINGS;
  const bumps = relayed.reduce((n, r) => n + r.op.transactions.length - 1, 0);
  const rates = (runs: Array<{ ms: number }>) => runs.map((run) => tps(run).toFixed(1)).join(", ");
  console.log(
    `${ROUNDS} rounds of N = ${N} private sends per path, alternating, one local stack (automine); setup ${(setupMs / 1000).toFixed(1)} s (${2 * N * ROUNDS + SINGLE} deposits, ${2 * N * ROUNDS + SINGLE} proofs in ${(proveMs / 1000).toFixed(1)} s)`,
  );
  console.log(
    `relay settings (stack defaults): pollIntervalMs ${s.pollIntervalMs}, requiredConfirmations ${s.requiredConfirmations}, gasLimit ${s.gasLimit}, stuckAfterMs ${s.stuckAfterMs}, maxLiveOperations ${s.maxLiveOperations}; client polls status every ${POLL_MS} ms`,
  );
  console.log(
    `through the queue  median ${queueTps.toFixed(2)} tx/s (rounds: ${rates(queueRuns)})  submit->confirmed p50 ${ms(median(qLat))}, p99 ${ms(percentile(qLat, 99))}; submit->202 p50 ${ms(median(relayed.map((r) => r.acceptMs)))}; fee bumps ${bumps}`,
  );
  // Where an operation's time went, from its history (the runtime's clock is this process's).
  const at = (r: (typeof relayed)[number], state: string) => Date.parse(r.op.history.find((h) => h.state === state)?.at ?? r.op.createdAt);
  const phase = (from: (r: (typeof relayed)[number]) => number, to: (r: (typeof relayed)[number]) => number) => ms(median(relayed.map((r) => to(r) - from(r))));
  console.log(
    `  its phases (p50): sent->accepted ${phase((r) => r.sentAt, (r) => Date.parse(r.op.createdAt))}, ->submitted ${phase((r) => Date.parse(r.op.createdAt), (r) => at(r, "submitted"))}, ->included ${phase((r) => at(r, "submitted"), (r) => at(r, "included"))}, ->confirmed ${phase((r) => at(r, "included"), (r) => at(r, "confirmed"))}, ->seen by the client ${phase((r) => at(r, "confirmed"), (r) => r.seenAt)}`,
  );
  console.log(`direct, one account median ${directTps.toFixed(2)} tx/s (rounds: ${rates(directRuns)})  send->receipt p50 ${ms(median(dLat))}, p99 ${ms(percentile(dLat, 99))}`);
  console.log(`ratio queue / direct throughput (medians): ${(queueTps / directTps).toFixed(2)}x`);
  // Where the time went: CPU per transaction of anvil and of this process (runtime, client and proxy).
  const cpuPer = (runs: Array<{ cpu: Cpu }>, of: "anvil" | "node") => `${(median(runs.map((run) => run.cpu[of] ?? 0)) / N).toFixed(1)} ms`;
  if (queueRuns[0]?.cpu.anvil !== null) {
    console.log(`CPU per transaction (medians): through the queue anvil ${cpuPer(queueRuns, "anvil")}, node ${cpuPer(queueRuns, "node")} | direct anvil ${cpuPer(directRuns, "anvil")}, node ${cpuPer(directRuns, "node")}`);
  }
  if (simulation && queueRuns[0]?.cpu.anvil !== null) {
    const direct = (of: "anvil" | "node") => median(directRuns.map((run) => run.cpu[of] ?? 0)) / N;
    const queued = (of: "anvil" | "node") => median(queueRuns.map((run) => run.cpu[of] ?? 0)) / N;
    // On a machine whose cores are all busy, throughput goes as 1 / (CPU per transaction of both processes).
    const bound = (extraAnvil: number) => (direct("anvil") + direct("node")) / (direct("anvil") + extraAnvil + direct("node"));
    console.log(
      `anvil per admission simulation (eth_call at latest, ${simulation.calls} calls): ${simulation.fullMs.toFixed(1)} ms, of it the verifier ${(simulation.fullMs - simulation.noVerifierMs).toFixed(1)} ms (${simulation.noVerifierMs.toFixed(1)} ms with the verifier answering true), the tree's Poseidon hashing ${(simulation.fullMs - simulation.noHasherMs).toFixed(1)} ms (${simulation.noHasherMs.toFixed(1)} ms with the hasher answering 0); anvil's extra per relay ${(queued("anvil") - direct("anvil")).toFixed(1)} ms`,
    );
    console.log(
      `CPU-bound ratio (all cores busy): ${bound(queued("anvil") - direct("anvil") + queued("node") - direct("node")).toFixed(2)}x at this run's CPU per transaction; ${bound(simulation.fullMs).toFixed(2)}x if node's CPU per relay equalled direct's (the simulation the one extra)`,
    );
  }
  if (rpc) {
    const perTx = (phase: "queue" | "direct") => rpc.table(phase, N * ROUNDS);
    console.log(`JSON-RPC calls per transaction (over ${ROUNDS} rounds): through the queue ${perTx("queue")} | direct ${perTx("direct")}`);
  }
  if (single.length > 0) console.log(`one at a time (${single.length}, client polls every ${SINGLE_POLL_MS} ms): submit->confirmed p50 ${ms(median(single))}, p99 ${ms(percentile(single, 99))} (= max)`);
} catch (error) {
  console.error(error instanceof QueuePathError ? `queue path failed: ${error.message}` : error);
  process.exitCode = 1;
} finally {
  await closeProvers();
  await stack?.stop();
}

/** anvil's CPU per simulation of each of `txs` (REPEAT calls each): whole, with the verifier answering true, with the hasher answering 0. */
async function simulationCost(txs: PreparedTransaction[]) {
  const REPEAT = 4;
  const s = stack as DevStack;
  const verifier = s.manifest.queue.proof.verifier.address;
  const accepting = { [verifier]: { code: "0x600160005260206000f3" } }; // returns 1: every proof verifies
  const calls = txs.map((tx) => ({ from: s.relayer.address, to: s.manifest.poolAddress, gas: `0x${GAS.toString(16)}`, data: encodeFunctionData({ abi: poolAbi, functionName: "transact", args: [tx.proof, tx.publicInputs, tx.extData] }) }));
  const perCall = async (override?: Record<string, { code: string }>) => {
    const before = cpuMs(s.chainPid) ?? 0;
    for (let i = 0; i < REPEAT; i++) {
      for (const call of calls) await jsonRpc(s.rpcUrl, "eth_call", override ? [call, "latest", override] : [call, "latest"]);
    }
    return ((cpuMs(s.chainPid) ?? 0) - before) / (REPEAT * calls.length);
  };
  const fullMs = median([await perCall(), await perCall(), await perCall()]);
  const noVerifierMs = median([await perCall(accepting), await perCall(accepting), await perCall(accepting)]);
  // The tree insertion's Poseidon hashing: the same call with the Pool's hasher answering 0 (not done by
  // the runtime: see docs/benchmarks.md, where a relay's CPU goes).
  const hasher = `0x${((await jsonRpc(s.rpcUrl, "eth_call", [{ to: s.manifest.poolAddress, data: toFunctionSelector("hasher()") }, "latest"])) as string).slice(26)}`;
  const hashing = { [hasher]: { code: "0x600060005260206000f3" } }; // returns 0, in the field: hashLeftRight's checks pass as before
  const noHasherMs = median([await perCall(hashing), await perCall(hashing), await perCall(hashing)]);
  return { fullMs, noVerifierMs, noHasherMs, calls: 3 * REPEAT * calls.length };
}

/**
 * Counts the JSON-RPC calls (a batch's each) this process sends to `urls`, by method, per phase. The
 * runtime runs in this process: its chain clients' calls (nodeFetch) are counted too.
 */
function countRpcCalls(urls: string[]) {
  const counts = new Map<string, Map<string, number>>();
  let current: string | undefined;
  const count = (url: string, body: unknown) => {
    if (current !== undefined && urls.some((u) => url.startsWith(u)) && typeof body === "string" && body !== "") {
      const phase = counts.get(current) ?? new Map<string, number>();
      counts.set(current, phase);
      const parsed = JSON.parse(body) as { method: string } | Array<{ method: string }>;
      for (const call of Array.isArray(parsed) ? parsed : [parsed]) phase.set(call.method, (phase.get(call.method) ?? 0) + 1);
      phase.set("(HTTP requests)", (phase.get("(HTTP requests)") ?? 0) + 1);
    }
  };
  // The runtime's chain clients and this script's own (the direct path) send by nodeFetch.
  nodeFetchHooks.onRequest = count;
  return {
    phase(name: string | undefined) {
      current = name;
    },
    table(name: string, transactions: number) {
      const phase = [...(counts.get(name) ?? new Map<string, number>())].sort(([a], [b]) => a.localeCompare(b));
      return phase.map(([method, n]) => `${method} ${(n / transactions).toFixed(2)}`).join(", ");
    },
  };
}

/** V8's sampling profiler over several stretches: one profile per stretch, their samples merged by the reader. */
async function startProfiler() {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  const profiles: Array<{ path: string; profile: unknown }> = [];
  return {
    resume: () => session.post("Profiler.start"),
    async pause(path: "queue" | "direct") {
      profiles.push({ path, profile: (await session.post("Profiler.stop")).profile });
    },
    async save(file: string) {
      await Promise.all(profiles.map(({ path, profile }, i) => writeFile(`${file}.${path}.${Math.floor(i / 2)}.cpuprofile`, JSON.stringify(profile))));
      session.disconnect();
    },
  };
}
