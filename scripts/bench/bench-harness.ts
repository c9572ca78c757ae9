import { startDevStack, type DevStack } from "../../harness/index.ts";
import { median } from "./stats.ts";

// The test harness's speeds, in one run: a per-test reset (chain and operation store reverted together)
// against anvil's own evm_revert + evm_snapshot pair on the same anvil, each after one mined transaction,
// alternating, and against starting a fresh stack (the price of it); a named fixture's first build
// against its later restores; and 4 stacks started side by side (as 4 vitest workers do) against 1. Medians.
const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const RESETS = Number(process.env.BENCH_RESETS ?? 400);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);

const timed = async (work: () => Promise<unknown>) => {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
};
const rpc = (stack: DevStack, method: string, params: unknown[] = []) =>
  fetch(stack.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
const call = async <T>(stack: DevStack, method: string, params: unknown[] = []): Promise<T> => {
  const body = (await (await rpc(stack, method, params)).json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
};

// 1. Fresh stack start (what a test would pay without reset), then resets, each after one mined transaction.
const fresh: number[] = [];
for (let i = 0; i < RUNS; i++) {
  let stack: DevStack | undefined;
  fresh.push(await timed(async () => (stack = await startDevStack())));
  await stack?.stop();
}
const stack = await startDevStack();
const [from, to] = stack.accounts;
/**
 * What a test leaves behind: a transaction sent and mined (its receipt read), a block, a balance, a nonce.
 * anvil 1.7.1's own evm_revert can meet a block still being mined (scripts/anvil-revert-repro.mjs): the
 * next transaction may then never be mined. Such a one is counted, and sent again, not waited for forever.
 */
const lost = { pair: 0, reset: 0 };
const mineOne = async (after: keyof typeof lost): Promise<void> => {
  const hash = await call<string>(stack, "eth_sendTransaction", [{ from: from?.address, to: to?.address, value: "0x1" }]);
  for (const started = performance.now(); performance.now() - started < 2_000; ) {
    if ((await call(stack, "eth_getTransactionReceipt", [hash])) !== null) return;
  }
  lost[after]++;
  await call(stack, "anvil_dropAllTransactions");
  await call(stack, "evm_mine");
  return mineOne(after);
};
const resets: number[] = [];
const pairs: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  // anvil's own pair, on the stack's anvil: a snapshot taken after the stack's last reset (so the stack's
  // own ids, taken before it, stay), then per transaction evm_revert to it and evm_snapshot anew.
  let id = await call<string>(stack, "evm_snapshot");
  for (let i = 0; i < RESETS / ROUNDS; i++) {
    await mineOne("pair");
    pairs.push(
      await timed(async () => {
        if ((await call<boolean>(stack, "evm_revert", [id])) !== true) throw new Error("evm_revert did not take");
        id = await call<string>(stack, "evm_snapshot");
      }),
    );
  }
  for (let i = 0; i < RESETS / ROUNDS; i++) {
    await mineOne("reset");
    resets.push(await timed(() => stack.reset()));
  }
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
    `reset (chain + store) after one mined transaction, median of ${resets.length}: ${f(median(resets))}`,
    `anvil's evm_revert + evm_snapshot after one, median of ${pairs.length}:  ${f(median(pairs))}`,
    `ratio reset / anvil's pair:              ${(median(resets) / median(pairs)).toFixed(2)}x (${ROUNDS} rounds alternating)`,
    `transactions anvil never mined, sent again: ${lost.pair} after its own pair, ${lost.reset} after a reset`,
    `fresh stack start, median of ${RUNS}:        ${f(median(fresh))}`,
    `ratio fresh start / reset:               ${(median(fresh) / median(resets)).toFixed(0)}x`,
    `named fixture: first build ${f(firstBuild)}, restore median ${f(median(restores))} (${(firstBuild / median(restores)).toFixed(0)}x)`,
    `start 4 stacks at once: median ${f(median(four))} vs 1 stack ${f(median(one))} (${(median(four) / median(one)).toFixed(2)}x)`,
    "",
  ].join("\n"),
);
