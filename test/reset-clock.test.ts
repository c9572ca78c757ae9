import { describe, expect, it } from "vitest";
import type { Address, Hex } from "viem";
import { ACTION_ROUTES, type DevStack } from "../harness/index.ts";
import { createAccountKeys, prepareAction, QueueProblemError, type QueueClient } from "../harness/client/index.ts";
import { poolFixture } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { rpc } from "./support/rpc.ts";

// Issue 30, item 3: a reset put the chain's clock back at the genesis date (anvil's revert sets it to
// the block's own timestamp), so a test behaved one way on a fresh stack and another after a reset.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let queue: QueueClient;

withQueueStack({ options: { store: ":memory:" } }, (s) => ({ stack, pool, queue } = s));

const nextBlockTime = async () => {
  await rpc(stack.rpcUrl, "evm_mine");
  return Number((await rpc<{ timestamp: Hex }>(stack.rpcUrl, "eth_getBlockByNumber", ["latest", false])).timestamp);
};

/** Quote a swap, move chain time 3600 s, submit the action: what the queue answers, and what became of it. */
async function quoteThenLateSubmit(): Promise<string> {
  const weth = stack.manifest.assets.find((a) => a.decimals === 18)?.address as Address;
  const keys = createAccountKeys();
  const config = await queue.beforePrepare();
  const quote = await queue.quote(config, { route: ACTION_ROUTES.swap, assetIn: pool.asset, assetOut: weth, amountIn: pool.usdc("30") });
  const { state, input } = await pool.fundedNote(2, keys, pool.usdc("31"));
  const prepared = await prepareAction({ config, quote, prover: pool.prover, tree: state.tree, keys, inputs: [input] });
  const moved = await fetch(`${stack.queueUrl}/api/dev/time`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ seconds: 3_600 }) });
  expect(moved.status).toBe(200);
  try {
    const op = await queue.waitFor("withdraw", (await queue.submitAction(config, prepared)).id);
    return `${op.state}${op.reason ? ` ${op.reason.code}` : ""}`;
  } catch (error) {
    if (!(error instanceof QueueProblemError)) throw error;
    const revert = (error.problem as { revert?: { name?: string } }).revert?.name;
    return `${error.problem.code}${revert ? ` ${revert}` : ""}`;
  }
}

describe("the chain's clock after a reset", () => {
  it("quote, move time 3600 s, submit: the same outcome on a fresh stack and after a reset", async () => {
    const fresh = await quoteThenLateSubmit();
    await stack.reset();
    const afterReset = await quoteThenLateSubmit();
    expect(afterReset).toBe(fresh);
    // The deadline lapsed on chain: the quote's deadline is the wall clock's, and the chain's is near it.
    expect(fresh).toBe("simulation_failed ActionExpired");
  });

  it("after a reset, the next block is mined near the wall clock, as on a fresh stack", async () => {
    await rpc(stack.rpcUrl, "evm_increaseTime", [86_400]);
    await stack.reset();
    expect(Math.abs((await nextBlockTime()) - Date.now() / 1000)).toBeLessThan(5);
    // Also through POST /api/dev/reset, and after a reset that followed another.
    expect((await fetch(`${stack.queueUrl}/api/dev/reset`, { method: "POST" })).status).toBe(200);
    expect(Math.abs((await nextBlockTime()) - Date.now() / 1000)).toBeLessThan(5);
  });

  it("a revert puts the clock where it stood against the wall clock when the snapshot was taken", async () => {
    await rpc(stack.rpcUrl, "evm_increaseTime", [7_200]);
    await rpc(stack.rpcUrl, "evm_mine");
    const snapshot = await stack.snapshot();
    await rpc(stack.rpcUrl, "evm_increaseTime", [86_400]);
    await rpc(stack.rpcUrl, "evm_mine");
    await stack.revert(snapshot);
    expect(Math.abs((await nextBlockTime()) - (Date.now() / 1000 + 7_200))).toBeLessThan(5);
  });
});
