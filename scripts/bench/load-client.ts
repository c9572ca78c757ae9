import { createRequire } from "node:module";

// bench:load's load client, a process of its own (forked with an IPC channel): it runs autocannon on
// each URL it is sent and answers with the counts. One process for the whole bench, so a run is not
// a Node start-up each and can be short: the two sides alternate in short slices that meet nearly the
// same load from the machine's other processes.
export interface LoadRun {
  url: string;
  seconds: number;
  connections: number;
}
export interface LoadResult {
  requests: number;
  seconds: number;
  p99: number;
  failed: number;
  /** The load client's own CPU per request answered, µs: what the two sides share of the machine. */
  clientCpuUs: number;
}

interface AutocannonResult {
  requests: { total: number };
  duration: number;
  latency: { p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}
type Autocannon = (options: { url: string; connections: number; duration: number; sampleInt: number }, done: (error: Error | null, result: AutocannonResult) => void) => unknown;

const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;

process.on("message", (run: LoadRun) => {
  // Sampled every 100 ms: a run ends within 100 ms of its duration (autocannon stops at a sample).
  const cpu = process.cpuUsage();
  autocannon({ url: run.url, connections: run.connections, duration: run.seconds, sampleInt: 100 }, (error, result) => {
    if (error) throw error;
    const used = process.cpuUsage(cpu);
    const requests = result.requests.total;
    const answer: LoadResult = { requests, seconds: result.duration, p99: result.latency.p99, failed: result.errors + result.timeouts + result.non2xx, clientCpuUs: (used.user + used.system) / requests };
    process.send?.(answer);
  });
});
