import { describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { rpc } from "./support/rpc.ts";

// What a test leaves in anvil that evm_revert does not take back: a block timestamp interval, the next
// block's base fee, the coinbase. Before the fix, after stack.reset() each block was still 1,000 s
// later than the one before, the base fee still 1,000 gwei (over the relayer's 500 gwei fee cap: the
// next test's relays could not be sent), and the fees still went to the coinbase the last test chose.
let stack: DevStack;
withQueueStack({ options: { store: ":memory:" }, client: false }, (s) => ({ stack } = s));

const relayer = async (body: Record<string, unknown> = {}) => {
  const response = await fetch(`${stack.queueUrl}/api/dev/relayer`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(response.status).toBe(200);
  return ((await response.json()) as { engine: string }).engine;
};

type Block = { timestamp: string; baseFeePerGas: string; miner: string };
const pending = () => rpc<Block>(stack.rpcUrl, "eth_getBlockByNumber", ["pending", false]);

describe("a reset puts back what anvil's revert does not", () => {
  it("the block timestamp interval, the next block's base fee and the coinbase are as on a fresh stack", async () => {
    await stack.reset();
    const clean = await pending();
    await rpc(stack.rpcUrl, "anvil_setBlockTimestampInterval", [1_000]);
    await rpc(stack.rpcUrl, "anvil_setNextBlockBaseFeePerGas", [`0x${(10n ** 12n).toString(16)}`]);
    await rpc(stack.rpcUrl, "anvil_setCoinbase", ["0x000000000000000000000000000000000000dEaD"]);
    await rpc(stack.rpcUrl, "evm_mine");

    await stack.reset();
    const after = await pending();
    expect(after.baseFeePerGas).toBe(clean.baseFeePerGas);
    expect(after.miner).toBe(clean.miner);
    // Two blocks mined: each near the wall clock, not 1,000 s apart.
    await rpc(stack.rpcUrl, "evm_mine");
    await rpc(stack.rpcUrl, "evm_mine");
    const mined = await rpc<Block>(stack.rpcUrl, "eth_getBlockByNumber", ["latest", false]);
    expect(Number(mined.timestamp) - Math.floor(Date.now() / 1000)).toBeLessThan(100);
  });

  it("a revert to a snapshot puts back the base fee it was taken with", async () => {
    await rpc(stack.rpcUrl, "anvil_setNextBlockBaseFeePerGas", [`0x${(3n * 10n ** 9n).toString(16)}`]);
    const snapshot = await stack.snapshot();
    const taken = await pending();
    await rpc(stack.rpcUrl, "anvil_setNextBlockBaseFeePerGas", [`0x${(10n ** 12n).toString(16)}`]);
    await stack.revert(snapshot);
    expect((await pending()).baseFeePerGas).toBe(taken.baseFeePerGas);
  });
});

// Before the fix, a relayer paused from the dev controls stayed paused after stack.reset(): the next
// test's operations waited `accepted` for ever.
describe("a reset puts the relayer back as it was", () => {
  it("paused by a dev control after the snapshot: running again after the revert; paused before it: paused again", async () => {
    await stack.reset();
    expect(await relayer({ engine: "paused" })).toBe("paused");
    await stack.reset();
    expect(await relayer()).toBe("running");

    expect(await relayer({ engine: "paused" })).toBe("paused");
    const paused = await stack.snapshot();
    expect(await relayer({ engine: "running" })).toBe("running");
    await stack.revert(paused);
    expect(await relayer()).toBe("paused");
    await stack.reset();
    expect(await relayer()).toBe("running");
  });
});

// Before the fix, the reset route had no body schema: `{ "now": false }` or `[]` reset the
// stack with a 200, where every other control refuses what it does not know.
describe("POST /api/dev/reset refuses a body it does not know", () => {
  const reset = (body?: string) => fetch(`${stack.queueUrl}/api/dev/reset`, { method: "POST", ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body }) });
  it.each(['{"now":false}', "[]", '"x"'])("%s: 400 invalid_request, nothing reset", async (body) => {
    await rpc(stack.rpcUrl, "evm_mine");
    const before = await rpc<{ hash: string }>(stack.rpcUrl, "eth_getBlockByNumber", ["latest", false]);
    const response = await reset(body);
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toContain("application/problem+json");
    expect(((await response.json()) as { code: string }).code).toBe("invalid_request");
    expect((await rpc<{ hash: string }>(stack.rpcUrl, "eth_getBlockByNumber", ["latest", false])).hash).toBe(before.hash);
  });
  it("{} or no body: reset", async () => {
    const answers = [await reset("{}"), await reset()];
    expect(await Promise.all(answers.map(async (a) => `${a.status} ${await a.text()}`))).toEqual(["200 {\"reset\":true}", "200 {\"reset\":true}"]);
  });
});

// Before the fix, `mining { mode: "hold" }` only turned automine off: with interval mining on (a
// test's evm_setIntervalMining, a fixture's), blocks kept coming and "held" operations were mined.
describe("POST /api/dev/mining hold holds interval mining too", () => {
  it("no block is mined while held, whatever mined them before; auto mines again", async () => {
    await stack.reset();
    await rpc(stack.rpcUrl, "evm_setIntervalMining", [1]);
    const hold = await fetch(`${stack.queueUrl}/api/dev/mining`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ mode: "hold" }) });
    expect(hold.status).toBe(200);
    const held = await rpc<string>(stack.rpcUrl, "eth_blockNumber");
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await rpc<string>(stack.rpcUrl, "eth_blockNumber")).toBe(held);
    expect(await rpc(stack.rpcUrl, "anvil_getIntervalMining")).toBeNull();
    const auto = await fetch(`${stack.queueUrl}/api/dev/mining`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ mode: "auto" }) });
    expect(auto.status).toBe(200);
    expect(await rpc(stack.rpcUrl, "anvil_getAutomine")).toBe(true);
    await stack.reset();
  });
});
