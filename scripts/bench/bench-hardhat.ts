import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa } from "execa";
import { createHardhatRuntimeEnvironment } from "hardhat/hre";
import { startDevStack } from "../../harness/index.ts";
import queueDevstackPlugin, { DEVSTACK_NETWORK } from "../../harness/hardhat/index.ts";
import { median } from "./stats.ts";

// The Hardhat plugin's first connect (network.create("devstack") until it returns, the stack ready)
// against startDevStack alone, and a reset through the plugin against one on the stack. Medians. The
// plugin's stack starts in a new worker thread, which loads the harness afresh each time: the fair
// comparison is startDevStack in a new process, its import included ("cold"); "warm" is startDevStack
// in this process, its modules loaded already.
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const RESETS = Number(process.env.BENCH_RESETS ?? 50);

const timed = async (work: () => Promise<unknown>) => {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
};

const project = await mkdtemp(path.join(tmpdir(), "bench-hardhat-"));
try {
  await writeFile(path.join(project, "package.json"), '{ "type": "module" }\n');
  const alone: number[] = [];
  const directResets: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const stack = await startDevStack();
    alone.push(performance.now() - t0);
    if (i === 0) for (let r = 0; r < RESETS; r++) directResets.push(await timed(() => stack.reset()));
    await stack.stop();
  }
  const cold: number[] = [];
  const harness = path.join(import.meta.dirname, "..", "..", "harness", "index.ts");
  const coldStart = `const t0 = performance.now(); const { startDevStack } = await import(${JSON.stringify(harness)}); const s = await startDevStack(); console.log(performance.now() - t0); await s.stop();`;
  for (let i = 0; i < RUNS; i++) cold.push(Number((await execa(process.execPath, ["--no-warnings", "--input-type=module", "--eval", coldStart])).stdout));
  const connect: number[] = [];
  const pluginResets: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const hre = await createHardhatRuntimeEnvironment({ plugins: [queueDevstackPlugin] }, {}, project);
    const t0 = performance.now();
    const { devstack } = await hre.network.create(DEVSTACK_NETWORK);
    connect.push(performance.now() - t0);
    if (i === 0) for (let r = 0; r < RESETS; r++) pluginResets.push(await timed(() => devstack.reset()));
    await hre.hooks.runHandlerChain("test", "onTestRunDone", ["nodejs"], async () => {}); // the run's end: the stack stops
  }
  const ms = (xs: number[]) => `${median(xs).toFixed(0)} ms`;
  const runs = (xs: number[]) => `${ms(xs)}  (median of ${xs.length}: ${xs.map((x) => x.toFixed(0)).join(", ")})`;
  console.log(`startDevStack alone, cold (a new process, import included): ${runs(cold)}`);
  console.log(`startDevStack alone, warm (modules loaded):                  ${runs(alone)}`);
  console.log(`plugin: network.create("devstack"), first connect:           ${runs(connect)}`);
  console.log(`  overhead: ${(median(connect) - median(cold)).toFixed(0)} ms against cold, ${(median(connect) - median(alone)).toFixed(0)} ms against warm`);
  console.log(`reset on the stack: ${median(directResets).toFixed(1)} ms; through the plugin (a message to its worker): ${median(pluginResets).toFixed(1)} ms (medians of ${RESETS})`);
} finally {
  await rm(project, { recursive: true, force: true });
}
