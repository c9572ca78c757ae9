import { describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { QueueProblemError, type QueueClient } from "../harness/client/index.ts";
import { poolFixture, provenSend as provenSendOf } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { startRuntimeProcess } from "./support/runtime-process.ts";
import { rpc } from "./support/rpc.ts";
import { ctlCli } from "./support/cli.ts";

// Dev controls over HTTP (/api/dev/*): what a client sees when the chain or the relayer misbehaves.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let queue: QueueClient;

withQueueStack({}, (s) => ({ stack, pool, queue } = s));

const dev = async (path: string, body: unknown) => {
  const response = await fetch(`${stack.queueUrl}/api/dev/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};
const stateOf = async (id: string) => (await queue.status("send", id)).state;
const settle = () => new Promise((r) => setTimeout(r, 1_000));

const provenSend = (from: number) => provenSendOf(stack, pool, queue, from);
const ctl = (...args: string[]) => ctlCli(stack.stateDir, ...args);
const latest = async () => {
  const block = await rpc<{ number: string; hash: string }>(stack.rpcUrl, "eth_getBlockByNumber", ["latest", false]);
  return { number: Number(block.number), hash: block.hash };
};

describe("dev controls", () => {
  it("mine and time: the head moves by what was asked", async () => {
    // From the CLI too, for the stack running from a state dir.
    const cli = await ctl("mine", "3", "--json");
    expect(cli.exitCode).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ number: expect.any(Number) });
    expect((await ctl("mining", "sideways")).exitCode).toBe(2);
    const before = await dev("mine", { blocks: 1 });
    const mined = await dev("mine", { blocks: 5 });
    expect(mined.body.number).toBe((before.body.number as number) + 5);
    const moved = await dev("time", { seconds: 3_600 });
    expect(moved.body.timestamp as number).toBeGreaterThanOrEqual((mined.body.timestamp as number) + 3_600);
    expect((await dev("mine", { blocks: 0 })).status).toBe(400);
  });

  it("hold mining: the operation stays submitted; release: it is confirmed", async () => {
    const { config, transaction } = await provenSend(2);
    expect((await dev("mining", { mode: "hold" })).body.mode).toBe("hold");
    const op = await queue.submit("send", config, transaction);
    await settle();
    expect(await stateOf(op.id)).toBe("submitted");
    await dev("mining", { mode: "auto" });
    expect((await queue.waitFor("send", op.id)).state).toBe("confirmed");
  });

  it("drop the operation's transaction: the relayer broadcasts the same bytes again, and it is confirmed", async () => {
    const { config, transaction } = await provenSend(5);
    await dev("mining", { mode: "hold" });
    const op = await queue.submit("send", config, transaction);
    for (let i = 0; i < 50 && (await stateOf(op.id)) !== "submitted"; i++) await new Promise((r) => setTimeout(r, 100));
    const dropped = await dev("drop", { operationId: op.id });
    expect(dropped.status).toBe(200);
    const hash = dropped.body.dropped as string;
    // Gone from the mempool for a moment, then back: the relayer re-broadcast the stored bytes.
    let back = false;
    for (let i = 0; i < 50 && !back; i++) {
      back = (await rpc<unknown>(stack.rpcUrl, "eth_getTransactionByHash", [hash])) !== null;
      if (!back) await new Promise((r) => setTimeout(r, 100));
    }
    expect(back).toBe(true);
    await dev("mining", { mode: "auto" });
    const done = await queue.waitFor("send", op.id);
    expect(done.state).toBe("confirmed");
    expect(done.transactionHash).toBe(hash); // the same transaction, not a second one
    expect((await dev("drop", { operationId: op.id })).status).toBe(422);
    expect((await dev("drop", { operationId: "op_nope" })).status).toBe(404);
  });

  it("pause the relayer: the operation stays accepted; resume: it goes through. An unfunded relayer is a 503", async () => {
    const { config, transaction } = await provenSend(3);
    expect((await dev("relayer", { engine: "paused" })).body.engine).toBe("paused");
    const op = await queue.submit("send", config, transaction);
    await settle();
    expect(await stateOf(op.id)).toBe("accepted");
    // A snapshot taken and reverted meanwhile (the harness pauses the relayer briefly) keeps it paused.
    await stack.revert(await stack.snapshot());
    await settle();
    expect(await stateOf(op.id)).toBe("accepted");
    expect((await dev("relayer", { engine: "running" })).body.engine).toBe("running");
    expect((await queue.waitFor("send", op.id)).state).toBe("confirmed");

    const balance = BigInt(await rpc<string>(stack.rpcUrl, "eth_getBalance", [stack.relayer.address, "latest"]));
    expect((await dev("relayer", { balanceWei: "0" })).body.balanceWei).toBe("0");
    const next = await provenSend(4);
    const refused = await queue.submit("send", next.config, next.transaction).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(QueueProblemError);
    expect((refused as QueueProblemError).problem.code).toBe("relayer_unfunded");
    await dev("relayer", { balanceWei: balance.toString() });
    expect((await queue.waitFor("send", (await queue.submit("send", next.config, next.transaction)).id)).state).toBe("confirmed");
  });

  // Issue 40, item 8: ctl printed the route's raw JSON, and had no reset.
  it("ctl says what it did in words, --json prints the route's answer as it came; ctl reset puts the stack back as POST /api/dev/reset does (after the tests that use the stack's state)", async () => {
    const words = async (...args: string[]) => {
      const run = await ctl(...args);
      expect(run.exitCode, `ctl ${args.join(" ")}: ${run.stderr}`).toBe(0);
      return run.stdout;
    };
    expect(await words("relayer", "balance", "1234567890123456789")).toBe("relayer running; its balance is about 1.2345 ETH");
    expect(await words("relayer", "balance", "10000000000000000000000")).toBe("relayer running; its balance is 10000 ETH");
    expect(await words("relayer", "pause")).toBe("relayer paused: accepted operations wait; its balance is 10000 ETH");
    expect(JSON.parse((await ctl("relayer", "resume", "--json")).stdout)).toEqual({ engine: "running", balanceWei: "10000000000000000000000" });
    expect(await words("rpc", "fail", "--methods", "eth_call")).toBe("the runtime's RPC answers 503 for eth_call only; the next relay goes through");
    expect(await words("rpc", "ok")).toBe("the runtime's RPC behaves; the next relay goes through");
    expect(await words("mine", "2")).toMatch(/^mined 2 blocks: the head is block \d+, chain time \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // A refusal: its status, code and detail, not the problem's JSON.
    const refused = await ctl("drop", "op_nope");
    expect({ exitCode: refused.exitCode, stderr: refused.stderr }).toEqual({ exitCode: 1, stderr: "queue-devstack ctl: 404 operation_not_found: no operation op_nope" });

    const before = await latest();
    expect(await words("reset")).toBe("reset the stack: the chain and the operations are back at the clean state it started in, faults off, the original configuration served");
    const reset = await latest();
    expect(reset.number).toBeLessThan(before.number);
    expect(JSON.parse((await ctl("reset", "--json")).stdout)).toEqual({ reset: true });
    expect(await latest()).toEqual(reset);
    expect((await dev("reset", {})).status).toBe(200);
    expect(await latest()).toEqual(reset);
  });

  it("are documented as development only, and absent from an operator's runtime", async () => {
    const doc = (await (await fetch(`${stack.queueUrl}/api/queue/openapi.json`)).json()) as { paths: Record<string, { post: { tags: string[]; summary: string } }> };
    expect(doc.paths["/api/dev/mine"]?.post.tags).toEqual(["development only"]);
    const { url, child } = await startRuntimeProcess(stack, ["--store", ":memory:"]);
    try {
      const response = await fetch(`${url}/api/dev/mine`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(response.status).toBe(404);
      expect(((await response.json()) as { code: string }).code).toBe("route_not_found");
    } finally {
      child.kill("SIGTERM");
      await child;
    }
  });
});
