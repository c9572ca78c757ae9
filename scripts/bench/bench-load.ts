import { fork } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import path from "node:path";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import { closeProvers, createQueueClient, reviewedFrom } from "../../harness/client/index.ts";
import { startDevStack } from "../../harness/index.ts";
import { poolFixture, provenSend } from "../../test/support/pool.ts";
import { corsFor } from "../../src/cors.ts";
import { installProblemHandlers } from "../../src/errors.ts";
import { countAnswer, HttpMetrics } from "../../src/metrics.ts";
import { securityHeaders } from "../../src/protection.ts";
import { makeChildrenLazy, RequestLogController } from "../../src/request-logger.ts";
import type { LoadResult, LoadRun } from "./load-client.ts";
import { median, percentile } from "./stats.ts";

// Load on the read routes and a soak of relays, in one run on one local stack:
// 1. GET /api/queue/config and GET /api/queue/send-status (a confirmed operation) under autocannon, side
//    by side with a bare Fastify route serving the same bytes in this same process (same heap, same
//    background work), in short slices that alternate; per slice pair the ratio of req/s, and this
//    process's CPU per request for each side (the steadier figure on a shared machine).
// 2. A soak: relays one after another for BENCH_SOAK_S seconds (each deposit, proof, submit, confirmed),
//    the process's memory sampled after a GC every 5 s: the first minute's median against the last's.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 1);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const SOAK_S = Number(process.env.BENCH_SOAK_S ?? 180);
// BENCH_CPU_PROFILE=<file>: after the measured rounds, a V8 CPU profile of this process under each
// route's load, runtime and bare apart (<file>.<route>.<side>.cpuprofile); profiling slows both.
const CPU_PROFILE = process.env.BENCH_CPU_PROFILE;
// BENCH_FLOOR=1: what each part of the runtime's per-request machinery costs alone (see floor() below).
const FLOOR = process.env.BENCH_FLOOR === "1";
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  console.error("run with --expose-gc (npm run bench:load does)");
  process.exit(2);
}

/** Headers Node writes itself, per connection or per answer. */
const PER_CONNECTION = new Set(["connection", "keep-alive", "date", "content-length", "transfer-encoding"]);

// The load client: one process of its own for the whole run (scripts/bench/load-client.ts), so both sides
// meet the same client, already warm, and a slice costs no Node start-up.
const client = fork(path.join(import.meta.dirname, "load-client.ts"), { execArgv: ["--experimental-strip-types", "--no-warnings=ExperimentalWarning"] });
client.on("exit", (code) => {
  if (code !== 0 && code !== null) throw new Error(`the load client exited with ${code}`);
});
const load = (run: LoadRun) =>
  new Promise<LoadResult>((resolve) => {
    client.once("message", (result) => resolve(result as LoadResult));
    client.send(run);
  });

interface Slice {
  requests: number;
  rps: number;
  p99: number;
  failed: number;
  /** This process's CPU (both servers live here; the load client does not) per request answered, µs. */
  cpuUs: number;
  clientCpuUs: number;
}
async function slice(url: string, seconds = SECONDS): Promise<Slice> {
  const cpu = process.cpuUsage();
  const result = await load({ url, seconds, connections: CONNECTIONS });
  const used = process.cpuUsage(cpu);
  return { requests: result.requests, rps: result.requests / result.seconds, p99: result.p99, failed: result.failed, cpuUs: (used.user + used.system) / result.requests, clientCpuUs: result.clientCpuUs };
}

/** This process's CPU with no load, in µs per second: background work both sides carry (the relayer's polls, the fault proxy). */
async function idleCpu(ms = 2_000): Promise<number> {
  const cpu = process.cpuUsage();
  await new Promise((r) => setTimeout(r, ms));
  const used = process.cpuUsage(cpu);
  return ((used.user + used.system) / ms) * 1000;
}

const floorApps: FastifyInstance[] = [];

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
    `autocannon in a process of its own, ${CONNECTIONS} connections; ${ROUNDS} rounds of a ${SECONDS} s slice each of the runtime and of bare Fastify (same process, same request, same body and headers; which goes first alternates), after a 2 s warm-up of each; this process's CPU with no load ${(await idleCpu()).toFixed(0)} µs/s`,
  );
  const spread = (xs: number[]) => `p25 ${percentile(xs, 25).toFixed(2)}, p75 ${percentile(xs, 75).toFixed(2)}, min ${Math.min(...xs).toFixed(2)}, max ${Math.max(...xs).toFixed(2)}`;
  for (const [name, urls] of Object.entries(targets)) {
    const runtime: Slice[] = [];
    const baseline: Slice[] = [];
    // Not measured: both servers' code is compiled hot first, as in a runtime that has been up a while.
    await slice(urls.runtime, 2);
    await slice(urls.bare, 2);
    // Paired slices: the machine's load drifts (other processes come and go), and two adjacent slices
    // meet nearly the same load, so a pair's ratio is steadier than a ratio of the two medians.
    for (let i = 0; i < ROUNDS; i++) {
      if (i % 2 === 0) runtime.push(await slice(urls.runtime));
      baseline.push(await slice(urls.bare));
      if (i % 2 === 1) runtime.push(await slice(urls.runtime));
    }
    const failed = [...runtime, ...baseline].reduce((n, r) => n + r.failed, 0);
    const pairs = runtime.map((r, i) => ({ rps: r.rps / (baseline[i] as Slice).rps, cpu: r.cpuUs / (baseline[i] as Slice).cpuUs }));
    const rpsRatios = pairs.map((p) => p.rps);
    const cpuRatios = pairs.map((p) => p.cpu);
    console.log(
      `GET ${name.padEnd(6)} runtime ${median(runtime.map((r) => r.rps)).toFixed(0)} req/s, p99 ${median(runtime.map((r) => r.p99))} ms | bare Fastify ${median(baseline.map((r) => r.rps)).toFixed(0)} req/s, p99 ${median(baseline.map((r) => r.p99))} ms | ratio ${median(rpsRatios).toFixed(2)}x (${spread(rpsRatios)})${failed ? ` | ${failed} errors or non-2xx` : ""}`,
    );
    console.log(
      `           CPU per request ${median(runtime.map((r) => r.cpuUs)).toFixed(1)} vs ${median(baseline.map((r) => r.cpuUs)).toFixed(1)} µs | ratio ${median(cpuRatios).toFixed(2)}x (${spread(cpuRatios)}) | the load client's ${median(runtime.map((r) => r.clientCpuUs)).toFixed(1)} vs ${median(baseline.map((r) => r.clientCpuUs)).toFixed(1)} µs`,
    );
  }

  if (CPU_PROFILE) {
    const session = new Session();
    session.connect();
    await session.post("Profiler.enable");
    // Every 50 µs: a request's few µs of difference show in the samples.
    await session.post("Profiler.setSamplingInterval", { interval: 50 });
    for (const [name, urls] of Object.entries(targets)) {
      for (const [side, url] of Object.entries(urls)) {
        await session.post("Profiler.start");
        const { requests, rps } = await slice(url, 3);
        const { profile } = await session.post("Profiler.stop");
        const file = `${CPU_PROFILE}.${name}.${side}.cpuprofile`;
        await writeFile(file, JSON.stringify(profile));
        console.log(`CPU profile ${file}: ${requests} requests, ${rps.toFixed(0)} req/s (profiled)`);
      }
    }
    session.disconnect();
  }

  if (FLOOR) await floor(`${stack.queueUrl}/api/queue/config`);

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
  for (const app of floorApps) await app.close();
  client.kill();
  await bare.close();
  await closeProvers();
  await stack.stop();
}

/**
 * The floor: bare Fastify routes answering the config's bytes and headers, each with one part of the
 * runtime's per-request machinery added (the runtime's own modules), then all of them, and the runtime's
 * own route, in rounds that alternate with the bare route; CPU per request and req/s against the bare
 * route of the same round. "both" is what the runtime cannot go below while it keeps these parts: the
 * runtime's route read beside it, in the same rounds, shows how far above it the route is.
 */
async function floor(configUrl: string): Promise<void> {
  const response = await fetch(configUrl);
  const headers = Object.fromEntries([...response.headers].filter(([name]) => !PER_CONNECTION.has(name)));
  const body = Buffer.from(await response.arrayBuffer());
  const security = securityHeaders();
  type Part = "logger" | "hook";
  const variant = async (parts: readonly Part[]) => {
    const has = (part: Part) => parts.includes(part);
    const http = new HttpMetrics();
    const app = Fastify(
      has("logger")
        ? {
            logger: { level: "info", stream: { write: () => true } },
            logController: new RequestLogController((request, reply) => countAnswer(http, request, reply)),
          }
        : {},
    );
    floorApps.push(app);
    if (has("logger")) makeChildrenLazy(app.log);
    // The headers a part sets are not set again by the route: the answer's bytes stay the same.
    let own = { ...headers };
    if (has("hook")) {
      const cors = corsFor(["loopback"]);
      installProblemHandlers(app, new Map(), { ...security, ...cors?.headers }, cors);
      await cors?.register(app);
      own = Object.fromEntries(Object.entries(own).filter(([name]) => !(name in security) && name !== "vary"));
    }
    app.get("/config", (_request, reply) => reply.headers(own).send(body));
    await app.listen({ host: "127.0.0.1", port: 0 });
    return `http://127.0.0.1:${(app.server.address() as { port: number }).port}/config`;
  };
  const variants: Array<[string, string]> = [
    ["bare Fastify", await variant([])],
    ["+ logger (lazy children; its controller counts answers)", await variant(["logger"])],
    ["+ the onRequest hook (security headers, CORS)", await variant(["hook"])],
    ["both (the runtime's machinery)", await variant(["logger", "hook"])],
    ["the runtime's GET config", configUrl],
  ];
  for (const [, url] of variants) await slice(url, 2);
  const slices = variants.map((): Slice[] => []);
  for (let i = 0; i < ROUNDS; i++) {
    const order = variants.map((_, v) => v);
    if (i % 2 === 1) order.reverse();
    for (const v of order) slices[v]?.push(await slice((variants[v] as [string, string])[1]));
  }
  const bareSlices = slices[0] as Slice[];
  console.log(`floor: bare Fastify routes with the config's bytes, one part of the runtime added at a time, then the runtime's route, ${ROUNDS} rounds alternating; against the bare route of the same round:`);
  variants.forEach(([name], v) => {
    const mine = slices[v] as Slice[];
    const cpu = median(mine.map((r, i) => r.cpuUs / (bareSlices[i] as Slice).cpuUs));
    const rps = median(mine.map((r, i) => r.rps / (bareSlices[i] as Slice).rps));
    console.log(`  ${name.padEnd(52)} CPU per request ${median(mine.map((r) => r.cpuUs)).toFixed(1)} µs (${cpu.toFixed(2)}x) | ${median(mine.map((r) => r.rps)).toFixed(0)} req/s (${rps.toFixed(2)}x)`);
  });
}
