import path from "node:path";
import { execa } from "execa";
import Fastify, { type FastifyReply } from "fastify";
import { closeProvers, createQueueClient, reviewedFrom } from "../harness/client/index.ts";
import { startDevStack } from "../harness/index.ts";
import { poolFixture, provenSend } from "../test/support/pool.ts";
import { median } from "./stats.ts";

// Load on the read routes and a soak of relays, in one run on one local stack:
// 1. GET /api/queue/config and GET /api/queue/send-status (a confirmed operation) under autocannon (its
//    own process: 10 connections), side by side with a bare Fastify route serving the same bytes in this
//    same process, alternating; medians of req/s and p99, and the ratio.
// 2. A soak: relays one after another for BENCH_SOAK_S seconds (each deposit, proof, submit, confirmed),
//    the process's memory sampled after a GC every 5 s: the first minute's median against the last's.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const SOAK_S = Number(process.env.BENCH_SOAK_S ?? 180);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  console.error("run with --expose-gc (npm run bench:load does)");
  process.exit(2);
}

/** Headers Node writes itself, per connection or per answer. */
const PER_CONNECTION = new Set(["connection", "keep-alive", "date", "content-length", "transfer-encoding"]);

const AUTOCANNON = path.join(import.meta.dirname, "..", "node_modules", "autocannon", "autocannon.js");
async function cannon(url: string, seconds = SECONDS): Promise<{ rps: number; p99: number; errors: number; non2xx: number; cpuUs: number }> {
  // This process's CPU (both servers live here; autocannon does not) per request answered.
  const cpu = process.cpuUsage();
  const { stdout } = await execa(process.execPath, [AUTOCANNON, "-c", "10", "-d", String(seconds), "-j", url]);
  const used = process.cpuUsage(cpu);
  const result = JSON.parse(stdout) as { requests: { average: number; total: number }; latency: { p99: number }; errors: number; non2xx: number };
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx, cpuUs: (used.user + used.system) / result.requests.total };
}

// BENCH_LOGGER=off measures the runtime without its request log (a dev stack keeps one in memory).
const stack = await startDevStack(process.env.BENCH_LOGGER === "off" ? { logger: false } : {});
const bare = Fastify();
try {
  // One confirmed operation, for the status route.
  const pool = await poolFixture(stack);
  const queue = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
  const relayOnce = async (from: number) => {
    const { config, transaction } = await provenSend(stack, pool, queue, from);
    const op = await queue.waitFor("send", (await queue.submit("send", config, transaction)).id, { intervalMs: 20 });
    if (op.state !== "confirmed") throw new Error(`relay ${op.id} ended ${op.state}`);
    return op.id;
  };
  const opId = await relayOnce(2);

  // The bare baseline: the same bytes (body and headers), from a Fastify route with nothing else.
  const sameBytes = async (url: string) => {
    const response = await fetch(url);
    const headers = Object.fromEntries([...response.headers].filter(([name]) => !PER_CONNECTION.has(name)));
    const body = Buffer.from(await response.arrayBuffer());
    return (_request: unknown, reply: FastifyReply) => reply.headers(headers).send(body);
  };
  bare.get("/config", await sameBytes(`${stack.queueUrl}/api/queue/config`));
  bare.get("/status", await sameBytes(`${stack.queueUrl}/api/queue/send-status?id=${opId}`));
  await bare.listen({ host: "127.0.0.1", port: 0 });
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`;

  const targets = {
    config: { runtime: `${stack.queueUrl}/api/queue/config`, bare: `${bareUrl}/config` },
    status: { runtime: `${stack.queueUrl}/api/queue/send-status?id=${opId}`, bare: `${bareUrl}/status?id=${opId}` }, // the same request: Fastify parses its query string for any route
  };
  console.log(
    `autocannon: 10 connections, ${SECONDS} s per run, ${ROUNDS} rounds of runtime and bare Fastify side by side (same process, same body and headers; which goes first alternates), after a 2 s warm-up of each; ratio: the median of the rounds' ratios`,
  );
  for (const [name, urls] of Object.entries(targets)) {
    const runtime: Array<Awaited<ReturnType<typeof cannon>>> = [];
    const baseline: Array<Awaited<ReturnType<typeof cannon>>> = [];
    // Not measured: both servers' code is compiled hot first, as in a runtime that has been up a while.
    await cannon(urls.runtime, 2);
    await cannon(urls.bare, 2);
    // Paired rounds: the machine's load drifts (other processes come and go), and a round's two runs
    // meet nearly the same load, so each round's ratio is steadier than a ratio of the two medians.
    for (let i = 0; i < ROUNDS; i++) {
      if (i % 2 === 0) runtime.push(await cannon(urls.runtime));
      baseline.push(await cannon(urls.bare));
      if (i % 2 === 1) runtime.push(await cannon(urls.runtime));
    }
    const failed = [...runtime, ...baseline].reduce((n, r) => n + r.errors + r.non2xx, 0);
    const rps = median(runtime.map((r) => r.rps));
    const bareRps = median(baseline.map((r) => r.rps));
    const cpu = median(runtime.map((r) => r.cpuUs));
    const bareCpu = median(baseline.map((r) => r.cpuUs));
    const ratio = median(runtime.map((r, i) => r.rps / (baseline[i] as typeof r).rps));
    console.log(
      `GET ${name.padEnd(6)} runtime ${rps.toFixed(0)} req/s, p99 ${median(runtime.map((r) => r.p99))} ms | bare Fastify ${bareRps.toFixed(0)} req/s, p99 ${median(baseline.map((r) => r.p99))} ms | ratio ${ratio.toFixed(2)}x` +
        ` (rounds ${runtime.map((r, i) => (r.rps / (baseline[i] as typeof r).rps).toFixed(2)).join(", ")})` +
        ` | CPU per request ${cpu.toFixed(1)} vs ${bareCpu.toFixed(1)} µs (${(cpu / bareCpu).toFixed(2)}x)${failed ? ` | ${failed} errors or non-2xx` : ""}`,
    );
  }

  // 2. The soak.
  if (SOAK_S > 0) {
    const samples: Array<{ at: number; heap: number; rss: number }> = [];
    const sample = () => {
      gc();
      const m = process.memoryUsage();
      samples.push({ at: performance.now(), heap: m.heapUsed, rss: m.rss });
    };
    const started = performance.now();
    sample();
    const timer = setInterval(sample, 5_000);
    let relays = 0;
    try {
      while (performance.now() - started < SOAK_S * 1000) {
        await relayOnce(2 + (relays % 7));
        relays++;
      }
    } finally {
      clearInterval(timer);
    }
    sample();
    const mb = (x: number) => `${(x / 2 ** 20).toFixed(1)} MB`;
    const window = (from: number, to: number) => samples.filter((s) => s.at - started >= from * 1000 && s.at - started < to * 1000);
    const first = window(0, Math.min(60, SOAK_S / 3));
    const last = window(SOAK_S - Math.min(60, SOAK_S / 3), SOAK_S + 60);
    console.log(
      `soak: ${relays} relays in ${((performance.now() - started) / 1000).toFixed(0)} s (each deposited, proved, relayed, confirmed); heap after GC ${mb(median(first.map((s) => s.heap)))} first → ${mb(median(last.map((s) => s.heap)))} last (max ${mb(Math.max(...samples.map((s) => s.heap)))}); RSS ${mb(median(first.map((s) => s.rss)))} → ${mb(median(last.map((s) => s.rss)))}; ${samples.length} samples`,
    );
  }
} finally {
  await bare.close();
  await closeProvers();
  await stack.stop();
}
