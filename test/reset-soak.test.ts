import { describe, expect, it } from "vitest";
import type { Hex } from "viem";
import type { DevStack } from "../harness/index.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// Issue 30, item 1: on one stack, a mined transaction then a reset, thousands of times in a row. On
// anvil 1.7.1 a revert racing the block its transaction is being mined in answers true and leaves the
// head ahead; before the fix, the first such reset failed and every later one too.
const RESETS = 3_000;
let stack: DevStack;

withQueueStack({ options: { store: ":memory:", logger: { level: process.env.DEVSTACK_LOG ?? "silent" } }, client: false, timeout: 120_000 }, (started) => ({ stack } = started));

/** Calls in one batch (one round trip); anvil starts them in order, so the head read comes before the send. */
async function batch(calls: Array<[string, unknown[]]>): Promise<unknown[]> {
  const response = await fetch(stack.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(calls.map(([method, params], id) => ({ jsonrpc: "2.0", id, method, params }))),
  });
  const answers = (await response.json()) as Array<{ id: number; result?: unknown; error?: { message: string } }>;
  return calls.map((call, id) => {
    const answer = answers.find((a) => a.id === id);
    if (!answer || answer.error) throw new Error(`${call[0]}: ${answer?.error?.message ?? "no answer"}`);
    return answer.result;
  });
}

describe("reset soak", () => {
  it(`${RESETS} resets in a row, each after one mined transaction, all bring the chain back to its start`, async () => {
    const [from, to] = stack.accounts;
    const send: [string, unknown[]] = ["eth_sendTransaction", [{ from: from?.address, to: to?.address, value: "0x1" }]];
    const head: [string, unknown[]] = ["eth_getBlockByNumber", ["latest", false]];
    const [start] = (await batch([head])) as [{ number: Hex; hash: Hex }];
    const away: number[] = [];
    for (let i = 0; i < RESETS; i++) {
      // The head as the last reset left it, and this round's transaction, in one round trip.
      const [block] = (await batch([head, send])) as [{ number: Hex; hash: Hex }];
      if (block.hash !== start.hash) away.push(i);
      await stack.reset();
    }
    const [end] = (await batch([head])) as [{ number: Hex; hash: Hex }];
    expect(away).toEqual([]);
    expect(end).toMatchObject({ number: start.number, hash: start.hash });
  });
});
