import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa } from "execa";
import { Instance } from "prool";
import { anvilBinaryPath } from "../../harness/chain/index.ts";
import { startDevStack } from "../../harness/index.ts";
import { launchToFirstOutput } from "./cli-launch.ts";
import { cpuMs, median } from "./stats.ts";

// Start-up of the local stack, each figure against its baseline measured in the same run, alternating:
// 1. the compiled CLI of the package (`queue-devstack --json`, what `npx queue-devstack` runs) from launch
//    until it prints its line, against a bare anvil answering eth_chainId; with each start-up step's
//    share (from the CLI's progress lines), so a regression shows where it happened. It runs from one
//    state dir kept across the runs, as `npx queue-devstack` run again in a project finds its `.devstack`
//    (what an earlier launch kept there: the proof files' hashes); the first launch, in a fresh state dir,
//    is measured beside it. Also the CLI run from source (npm run dev-stack);
// 2. startDevStack() → ready in this process (its modules loaded) against prool's Instance.anvil().start()
//    of the same anvil binary;
// 3. the resident memory of an idle stack: the CLI's node process and its anvil, some seconds after ready;
// 4. a short command against a running stack (`ctl faults`: stack.json read, one request, its answer in
//    words), launch to exit, compiled and from source, against a bare `node -e 0`.
// It builds the package first (npm run build).
const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const MEMORY_RUNS = Number(process.env.BENCH_MEMORY_RUNS ?? 3);
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 5);

const CLI = {
  compiled: [path.join("dist", "scripts", "cli", "queue-devstack.js")],
  source: ["--experimental-strip-types", "--no-warnings", path.join("scripts", "cli", "dev-stack.ts")],
};

/** One start-up step of a launch: when it began and ended, in ms since the launch. */
type Steps = Map<string, { start: number; end: number }>;

/** The CLI's progress line: `  <step>  <ms> ms  <detail>`. */
const STEP_LINE = /^ {2}(\S.*?)\s+(\d+) ms(?: {2}.*)?$/;

function stackOnce(entry: string[], hooks: Parameters<typeof launchToFirstOutput>[2] = {}, keptStateDir?: string): Promise<number> {
  return launchToFirstOutput((stateDir) => [...entry, "--json", "--chain-port", "0", "--queue-port", "0", "--state-dir", stateDir], "bench-stack-", hooks, keptStateDir);
}

/**
 * A compiled launch, with its steps as the progress lines tell them (a line arrives as its step ends),
 * and the CPU its node process used until ready: what the launch costs whatever the machine's load.
 */
async function compiledOnce(keptStateDir?: string): Promise<{ ms: number; steps: Steps; cpu: number }> {
  const steps: Steps = new Map();
  let cpu = Number.NaN;
  const ms = await stackOnce(CLI.compiled, {
    stderrLine(line, at) {
      const m = STEP_LINE.exec(line);
      if (m) steps.set(m[1] as string, { start: at - Number(m[2]), end: at });
    },
    async ready(pid) {
      cpu = cpuMs(pid) ?? Number.NaN;
    },
  }, keptStateDir);
  return { ms, steps, cpu };
}

async function anvilOnce(): Promise<number> {
  const started = performance.now();
  const child = execa(anvilBinaryPath(), ["--port", "0", "--chain-id", "11155111"], { reject: false });
  const port = await new Promise<string>((resolve) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /Listening on \S+:(\d+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
  });
  for (;;) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      });
      if (((await r.json()) as { result?: string }).result === "0xaa36a7") break;
    } catch {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  const elapsed = performance.now() - started;
  child.kill("SIGINT");
  await child;
  return elapsed;
}

/** prool's anvil instance, the same binary, on a free port: start() resolves at its "Listening on" line. */
async function proolOnce(): Promise<number> {
  const instance = Instance.anvil({ binary: anvilBinaryPath(), port: 0, chainId: 11155111 });
  const started = performance.now();
  await instance.start();
  const elapsed = performance.now() - started;
  await instance.stop();
  return elapsed;
}

async function startDevStackOnce(): Promise<number> {
  const started = performance.now();
  const stack = await startDevStack();
  const elapsed = performance.now() - started;
  await stack.stop();
  return elapsed;
}

/** `node <args>` from launch to exit: a short command, or the bare `node -e 0` it is measured against. */
async function nodeToExit(args: string[]): Promise<number> {
  const started = performance.now();
  await execa(process.execPath, args);
  return performance.now() - started;
}
/** `queue-devstack ctl faults` against a running stack. */
const shortCommand = (entry: string[], stateDir: string) => [...entry, "ctl", "faults", "--state-dir", stateDir];

/** VmRSS of a process, in MB. */
async function residentMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
}

/** The process's descendants (anvil may be spawned through setpriv, which execs it: same PID). */
async function descendants(pid: number): Promise<number[]> {
  const tasks = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8").catch(() => "");
  const children = tasks.split(/\s+/).filter(Boolean).map(Number);
  return [...children, ...(await Promise.all(children.map(descendants))).flat()];
}

/** A compiled launch left idle IDLE_S seconds after ready: the resident memory of node and of anvil. */
async function idleMemoryOnce(): Promise<{ node: number; anvil: number }> {
  let sample = { node: Number.NaN, anvil: Number.NaN };
  await stackOnce(CLI.compiled, {
    async ready(pid) {
      await new Promise((r) => setTimeout(r, IDLE_S * 1000));
      let anvil = Number.NaN;
      for (const child of await descendants(pid)) {
        if ((await readFile(`/proc/${child}/comm`, "utf8").catch(() => "")).trim() === "anvil") anvil = await residentMb(child);
      }
      sample = { node: await residentMb(pid), anvil };
    },
  });
  return sample;
}

await execa("npm", ["run", "build", "--silent"]);
const keptStateDir = await mkdtemp(path.join(tmpdir(), "bench-stack-kept-"));
const compiled: Array<{ ms: number; steps: Steps; cpu: number }> = [];
const firstLaunch: Array<{ ms: number; cpu: number }> = [];
const source: number[] = [];
const anvil: number[] = [];
const devStack: number[] = [];
const prool: number[] = [];
try {
  // Warm-up: the file cache, this process's modules, and the kept state dir's first launch.
  await compiledOnce(keptStateDir);
  await stackOnce(CLI.source);
  await startDevStackOnce();
  await proolOnce();
  for (let i = 0; i < RUNS; i++) {
    anvil.push(await anvilOnce());
    compiled.push(await compiledOnce(keptStateDir));
    firstLaunch.push(await compiledOnce());
    source.push(await stackOnce(CLI.source));
    prool.push(await proolOnce());
    devStack.push(await startDevStackOnce());
  }
} finally {
  await rm(keptStateDir, { recursive: true, force: true });
}
const shortCompiled: number[] = [];
const shortSource: number[] = [];
const bareNode: number[] = [];
const running = await startDevStack();
try {
  await nodeToExit(shortCommand(CLI.compiled, running.stateDir));
  await nodeToExit(shortCommand(CLI.source, running.stateDir));
  for (let i = 0; i < RUNS; i++) {
    bareNode.push(await nodeToExit(["-e", "0"]));
    shortCompiled.push(await nodeToExit(shortCommand(CLI.compiled, running.stateDir)));
    shortSource.push(await nodeToExit(shortCommand(CLI.source, running.stateDir)));
  }
} finally {
  await running.stop();
}
const memory: Array<{ node: number; anvil: number }> = [];
for (let i = 0; i < MEMORY_RUNS; i++) memory.push(await idleMemoryOnce());

const ms = (x: number) => `${x.toFixed(0)} ms`;
const line = (label: string, xs: number[]) => console.log(`${label.padEnd(44)} median ${ms(median(xs))}  (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`);
const total = median(compiled.map((c) => c.ms));
console.log(`runs: ${RUNS} each, alternating`);
line("local stack, installed CLI -> ready", compiled.map((c) => c.ms));
line("  its first launch (a fresh state dir)", firstLaunch.map((c) => c.ms));
line("local stack, from source -> ready", source);
line("bare anvil launch -> eth_chainId", anvil);
console.log(`ratio installed CLI / bare anvil: ${(total / median(anvil)).toFixed(1)}x (first launch: ${(median(firstLaunch.map((c) => c.ms)) / median(anvil)).toFixed(1)}x)`);

// Each step's median start and duration, and its share of the median launch; steps run side by side
// may add up to more than the whole.
console.log("installed CLI's start-up, by step (median start, duration, share of launch -> ready):");
const names = [...new Set(compiled.flatMap((c) => [...c.steps.keys()]))];
const phase = (label: string, start: number, duration: number) =>
  console.log(`  ${label.padEnd(42)} at ${ms(start).padStart(7)}  ${ms(duration).padStart(7)}  ${((duration / total) * 100).toFixed(0).padStart(3)}%`);
const firstStart = median(compiled.map((c) => Math.min(...[...c.steps.values()].map((s) => s.start))));
phase("node, the CLI's modules (until a step begins)", 0, firstStart);
const rows = names.map((name) => {
  const runs = compiled.flatMap((c) => c.steps.get(name) ?? []);
  return { name, start: median(runs.map((s) => s.start)), duration: median(runs.map((s) => s.end - s.start)) };
});
for (const row of rows.sort((a, b) => a.start - b.start)) phase(row.name, row.start, row.duration);
const lastEnd = median(compiled.map((c) => Math.max(...[...c.steps.values()].map((s) => s.end))));
phase("after the last step (the ready line)", lastEnd, Math.max(0, total - lastEnd));
const cpu = compiled.map((c) => c.cpu);
console.log(`installed CLI's node process, CPU (user + system) until ready: median ${ms(median(cpu))} (min ${Math.min(...cpu)}, max ${Math.max(...cpu)}); ${((median(cpu) / total) * 100).toFixed(0)}% of the launch; first launch ${ms(median(firstLaunch.map((c) => c.cpu)))}`);

line("startDevStack() -> ready, in process", devStack);
line("prool Instance.anvil().start(), same anvil", prool);
console.log(`ratio startDevStack / prool anvil: ${(median(devStack) / median(prool)).toFixed(1)}x`);

const mb = (xs: number[]) => `${median(xs).toFixed(0)} MB (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`;
console.log(`idle stack, ${IDLE_S} s after ready (${MEMORY_RUNS} runs): node resident ${mb(memory.map((m) => m.node))}, anvil ${mb(memory.map((m) => m.anvil))}`);
line("short command (ctl faults), installed CLI", shortCompiled);
line("short command (ctl faults), from source", shortSource);
line("bare node (node -e 0)", bareNode);
console.log(`ratio installed short command / bare node: ${(median(shortCompiled) / median(bareNode)).toFixed(1)}x`);
