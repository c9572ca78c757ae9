import { afterEach, describe, expect, it } from "vitest";
import type { Hex } from "viem";
import { SnapshotError, type DevStack } from "../harness/index.ts";
import { toRelayRequest, type QueueClient } from "../harness/client/index.ts";
import { poolFixture, provenSend } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { rpc } from "./support/rpc.ts";
import { snapshotHooks } from "../harness/snapshot/index.ts";
import { admissionHooks } from "../src/relay/relayer.ts";

// Issue 30, item 2: POST /api/dev/reset racing the other dev controls and a relay. Before the fix, the
// resets answered 500 internal_error (and so did a send-relay), and afterwards no reset worked again.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let queue: QueueClient;

withQueueStack({ options: { store: ":memory:" } }, (s) => ({ stack, pool, queue } = s));
afterEach(() => {
  admissionHooks.afterChecks = undefined;
  snapshotHooks.afterRevert = undefined;
});

interface Answer {
  what: string;
  status: number;
  contentType: string;
  body: { code?: string; detail?: string } & Record<string, unknown>;
}

const post = async (what: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
  const response = await fetch(`${stack.queueUrl}${path}`, {
    method: "POST",
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { what, status: response.status, contentType: response.headers.get("content-type") ?? "", body: (await response.json()) as Answer["body"] };
};
const dev = (path: string, body?: unknown) => post(`${path} ${JSON.stringify(body ?? {})}`, `/api/dev/${path}`, body);
const inTurn = async (...steps: Array<() => Promise<Answer>>) => {
  const answers: Answer[] = [];
  for (const step of steps) answers.push(await step());
  return answers;
};

describe("reset racing the dev controls", () => {
  it("six rounds of resets, controls and a send-relay at once, each ending with a reorg of the reset's block: no 500 anywhere, every reset 200; then a reset answers 200 and the chain is back at its start", async () => {
    const start = await rpc<{ number: Hex; hash: Hex }>(stack.rpcUrl, "eth_getBlockByNumber", ["latest", false]);
    const answers: Answer[] = [];
    // One send, proven once: after the first round's resets its deposit is gone, and the checks refuse it
    // (409 unknown_root) unless a reset is under way (503 chain_reverting); never a 500.
    const { config, transaction } = await provenSend(stack, pool, queue, 2);
    const relay = toRelayRequest(config, transaction);
    for (let round = 0; round < 6; round++) {
      const round_ = await Promise.all([
        dev("reset"),
        dev("reset"),
        dev("reset"),
        dev("mine", { blocks: 1 }),
        dev("time", { seconds: 60 }),
        inTurn(() => dev("config", { serve: "alternate" }), () => dev("config", { serve: "original" })),
        inTurn(() => dev("mining", { mode: "hold" }), () => dev("mining", { mode: "auto" })),
        inTurn(() => dev("rpc", { fault: "fail" }), () => dev("rpc", { fault: "none" })),
        dev("reorg", { depth: 1 }),
        post("send-relay", "/api/queue/send-relay", relay),
      ]);
      answers.push(...round_.flat());
      // Issue 40, item 1: a reorg right after a reset replaces the clean snapshot's own block, which
      // took anvil's snapshot ids with it (every later reset answered 503): the next round's resets meet it.
      answers.push(...(await inTurn(() => dev("reset"), () => dev("reorg", { depth: 1 }))));
    }
    const failed = answers.filter((a) => a.status >= 500 && a.status !== 503);
    expect(failed.map((a) => `${a.what}: ${a.status} ${a.body.code} ${a.body.detail}`)).toEqual([]);
    // Every refusal is a problem with a stable code; a 503 says when to come back.
    for (const a of answers.filter((x) => x.status >= 400)) {
      expect(a.contentType, a.what).toContain("application/problem+json");
      expect(a.body.code, a.what).toEqual(expect.any(String));
    }
    expect(answers.filter((a) => a.what === "reset {}").map((a) => a.status)).toEqual(Array(24).fill(200));

    const after = await dev("reset");
    expect(after.status).toBe(200);
    const head = await rpc<{ number: Hex; hash: Hex }>(stack.rpcUrl, "eth_getBlockByNumber", ["latest", false]);
    expect(head).toMatchObject({ number: start.number, hash: start.hash });
    expect(stack.faults.serving()).toBe("original");
    expect(await rpc(stack.rpcUrl, "anvil_getAutomine")).toBe(true);
  });

  it("a send-relay whose checks meet a reset answers 503 chain_reverting with Retry-After, and nothing is stored", async () => {
    const { config, transaction } = await provenSend(stack, pool, queue, 3);
    const since = new Date().toISOString();
    // The admission's checks passed against the chain before the reset; the reset runs before it stores.
    admissionHooks.afterChecks = async () => {
      admissionHooks.afterChecks = undefined;
      await stack.reset();
    };
    const response = await fetch(`${stack.queueUrl}/api/queue/send-relay`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(toRelayRequest(config, transaction)) });
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(((await response.json()) as { code: string }).code).toBe("chain_reverting");
    expect(stack.diagnostics(since).operations).toEqual([]);
  });

  it("a reset that fails answers 503 reset_failed saying why, and the next reset answers 200 with the chain at its start", async () => {
    await dev("reset");
    const start = await rpc<{ hash: Hex }>(stack.rpcUrl, "eth_getBlockByNumber", ["latest", false]);
    await dev("mine", { blocks: 3 });
    // Right after anvil took the revert (its snapshot id spent), the reset breaks off.
    snapshotHooks.afterRevert = async () => {
      snapshotHooks.afterRevert = undefined;
      throw new Error("the test broke the reset off");
    };
    const failed = await dev("reset");
    expect(failed).toMatchObject({ status: 503, body: { code: "reset_failed", detail: expect.stringContaining("the test broke the reset off") } });
    expect(failed.contentType).toContain("application/problem+json");
    expect(await rpc(stack.rpcUrl, "anvil_getAutomine")).toBe(true); // mining as it was
    await dev("mine", { blocks: 2 });
    expect((await dev("reset")).status).toBe(200);
    expect((await rpc<{ hash: Hex }>(stack.rpcUrl, "eth_getBlockByNumber", ["latest", false])).hash).toBe(start.hash);
  });

  it("stack.reset(), snapshot, revert and serve racing the dev routes: each completes or is refused by name, and a reset then brings the chain back", async () => {
    await stack.reset();
    const start = await rpc<{ hash: Hex }>(stack.rpcUrl, "eth_getBlockByNumber", ["latest", false]);
    await dev("mine", { blocks: 2 });
    const taken = await stack.snapshot();
    const settled = await Promise.allSettled([
      stack.reset(),
      stack.faults.serve("alternate"),
      dev("mine", { blocks: 1 }),
      stack.revert(taken), // dropped if a reset came first: a SnapshotError, by name
      stack.snapshot(),
      dev("reorg", { depth: 1 }),
      stack.reset(),
    ]);
    for (const outcome of settled) if (outcome.status === "rejected") expect(outcome.reason).toBeInstanceOf(SnapshotError);
    for (const outcome of settled) if (outcome.status === "fulfilled" && typeof outcome.value === "object" && outcome.value && "status" in outcome.value) expect(outcome.value.status).toBe(200);
    await stack.reset();
    expect((await rpc<{ hash: Hex }>(stack.rpcUrl, "eth_getBlockByNumber", ["latest", false])).hash).toBe(start.hash);
    expect(stack.faults.serving()).toBe("original");
  });
});
