import { startDevStack, type DevStack } from "../harness/index.ts";
import { median } from "./stats.ts";

// The test harness's speeds, in one run: a per-test reset (chain and operation store reverted together)
// against starting a fresh stack, the price of it; a named fixture's first build against its later
// restores; and 4 stacks started side by side (as 4 vitest workers do) against 1. Medians.
const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const RESETS = Number(process.env.BENCH_RESETS ?? 200);

const timed = async (work: () => Promise<unknown>) => {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
};
const rpc = (stack: DevStack, method: string, params: unknown[] = []) =>
  fetch(stack.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });

// 1. Fresh stack start (what a test would pay without reset), then resets of a dirtied stack.
const fresh: number[] = [];
for (let i = 0; i < RUNS; i++) {
  let stack: DevStack | undefined;
  fresh.push(await timed(async () => (stack = await startDevStack())));
  await stack?.stop();
}
const stack = await startDevStack();
const resets: number[] = [];
for (let i = 0; i < RESETS; i++) {
  // What a test leaves behind: blocks, a balance change.
  await rpc(stack, "anvil_mine", ["0x2"]);
  await rpc(stack, "anvil_setBalance", [stack.accounts[3]?.address, "0x1"]);
  resets.push(await timed(() => stack.reset()));
}

// 2. A named fixture: 20 blocks and 10 balance changes, built once, then restored.
const setup = async (s: DevStack) => {
  for (let i = 0; i < 10; i++) {
    await rpc(s, "anvil_setBalance", [s.accounts[i % s.accounts.length]?.address, `0x${(i + 1).toString(16)}`]);
    await rpc(s, "anvil_mine", ["0x2"]);
  }
};
const firstBuild = await timed(() => stack.loadFixture(setup));
const restores: number[] = [];
for (let i = 0; i < RUNS * 5; i++) {
  await rpc(stack, "anvil_mine", ["0x1"]);
  restores.push(await timed(() => stack.loadFixture(setup)));
}
await stack.stop();

// 3. 4 stacks started at once against 1.
const one: number[] = [];
const four: number[] = [];
for (let i = 0; i < Math.max(3, Math.floor(RUNS / 2)); i++) {
  let single: DevStack | undefined;
  one.push(await timed(async () => (single = await startDevStack())));
  await single?.stop();
  let many: DevStack[] = [];
  four.push(await timed(async () => (many = await Promise.all([0, 1, 2, 3].map(() => startDevStack())))));
  await Promise.all(many.map((s) => s.stop()));
}

const f = (ms: number) => `${ms.toFixed(ms < 10 ? 2 : 0)} ms`;
process.stdout.write(
  [
    `reset (chain + store), median of ${RESETS}:    ${f(median(resets))}`,
    `fresh stack start, median of ${RUNS}:        ${f(median(fresh))}`,
    `ratio fresh start / reset:               ${(median(fresh) / median(resets)).toFixed(0)}x`,
    `named fixture: first build ${f(firstBuild)}, restore median ${f(median(restores))} (${(firstBuild / median(restores)).toFixed(0)}x)`,
    `start 4 stacks at once: median ${f(median(four))} vs 1 stack ${f(median(one))} (${(median(four) / median(one)).toFixed(2)}x)`,
    "",
  ].join("\n"),
);
