import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { CIRCUIT_BUILD_DIR } from "../harness/deployment/index.ts";
import { buildQueueRuntime } from "../src/server.ts";
import { RELAYER_KEY } from "./support/chain.ts";
import type { DevStack } from "../harness/index.ts";
import type { QueueClient } from "../harness/client/index.ts";
import { poolFixture, provenSend } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { rpc } from "./support/rpc.ts";

// GET /api/queue/health (readiness, and why not) and GET /metrics (Prometheus), seen from outside.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let queue: QueueClient;

withQueueStack({ options: { relay: { stuckAfterMs: 400 }, runtime: { chainTimeoutMs: 500 } } }, (s) => ({ stack, pool, queue } = s));

const health = async () => {
  const response = await fetch(`${stack.queueUrl}/api/queue/health`);
  return { status: response.status, type: response.headers.get("content-type"), body: (await response.json()) as { status?: string; code?: string; checks: Record<string, Record<string, unknown> | null> } };
};
const dev = (path: string, body: unknown) => fetch(`${stack.queueUrl}/api/dev/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const metric = async (line: RegExp) => {
  const text = await (await fetch(`${stack.queueUrl}/metrics`)).text();
  const match = text.split("\n").find((l) => line.test(l));
  return match === undefined ? null : Number(match.split(" ").at(-1));
};
const until = async (check: () => Promise<boolean>) => {
  for (let i = 0; i < 100 && !(await check()); i++) await new Promise((r) => setTimeout(r, 100));
};

describe("health", () => {
  it("ready: the chain answers, the relayer is funded, the queue has room, the engine runs", async () => {
    const ready = await health();
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe("ready");
    expect(ready.body.checks.chain).toMatchObject({ reachable: true, head: expect.any(Number) });
    expect(ready.body.checks.relayer).toMatchObject({ address: stack.relayer.address, ready: true });
    expect(ready.body.checks.queue).toMatchObject({ depth: 0, capacity: 64 });
    expect(ready.body.checks.engine).toMatchObject({ state: "running" });
  });

  it("not ready, and why, while the relayer is paused, unfunded, or the chain is unreachable; ready again by itself", async () => {
    await dev("relayer", { engine: "paused" });
    let answer = await health();
    expect(answer.status).toBe(503);
    expect(answer.type).toContain("application/problem+json");
    expect(answer.body.code).toBe("not_ready");
    expect(answer.body.checks.engine).toMatchObject({ state: "paused" });
    await dev("relayer", { engine: "running" });
    expect((await health()).status).toBe(200);

    const balance = await rpc<string>(stack.rpcUrl, "eth_getBalance", [stack.relayer.address, "latest"]);
    await dev("relayer", { balanceWei: "0" });
    answer = await health();
    expect(answer.status).toBe(503);
    expect(answer.body.checks.relayer).toMatchObject({ ready: false, detail: expect.stringContaining("relayer holds 0 wei") });
    await dev("relayer", { balanceWei: BigInt(balance).toString() });

    stack.faults.rpc({ kind: "fail", forMs: 1_500 });
    answer = await health();
    expect(answer.status).toBe(503);
    expect(answer.body.checks.chain).toMatchObject({ reachable: false });
    // Why, once: the relayer's check, which could not ask the chain either, does not say it again.
    expect(String((answer.body as { detail?: string }).detail).match(/the chain did not answer/g)).toHaveLength(1);
    await until(async () => (await health()).status === 200); // the fault ended by itself
    expect((await health()).status).toBe(200);
  });
});

describe("metrics", () => {
  it("count requests by route and status, operations by state, time to confirm, and fee bumps", async () => {
    const { config, transaction } = await provenSend(stack, pool, queue, 2);
    await dev("mining", { mode: "hold" });
    const op = await queue.submit("send", config, transaction);
    await until(async () => ((await metric(/^queue_fee_bumps_total /)) ?? 0) >= 1); // stuck past stuckAfterMs: bumped
    expect(await metric(/^queue_fee_bumps_total /)).toBeGreaterThanOrEqual(1);
    await dev("mining", { mode: "auto" });
    expect((await queue.waitFor("send", op.id)).state).toBe("confirmed");

    expect(await metric(/^queue_http_requests_total\{method="POST",route="\/api\/queue\/send-relay",status="202"\}/)).toBe(1);
    // The latency histogram of that route: cumulative buckets, the last (+Inf) equal to the count.
    expect(await metric(/^queue_http_request_duration_seconds_count\{method="POST",route="\/api\/queue\/send-relay"\}/)).toBe(1);
    expect(await metric(/^queue_http_request_duration_seconds_bucket\{method="POST",route="\/api\/queue\/send-relay",le="\+Inf"\}/)).toBe(1);
    expect(await metric(/^queue_http_request_duration_seconds_bucket\{method="POST",route="\/api\/queue\/send-relay",le="5"\}/)).toBe(1);
    expect(await metric(/^queue_http_request_duration_seconds_sum\{method="POST",route="\/api\/queue\/send-relay"\}/)).toBeGreaterThan(0);
    expect(await metric(/^queue_operations\{kind="send",state="confirmed"\}/)).toBe(1);
    expect(await metric(/^queue_operation_confirm_seconds_count\{kind="send"\}/)).toBe(1);
    expect(await metric(/^queue_operation_transitions_total\{kind="send",state="submitted"\}/)).toBeGreaterThanOrEqual(1);
    // Routes are labelled by pattern, never by raw URL: an id does not become a label.
    await fetch(`${stack.queueUrl}/api/queue/send-status?id=op_nope`);
    expect(await metric(/^queue_http_requests_total\{method="GET",route="\/api\/queue\/send-status",status="404"\}/)).toBe(1);
    expect(await metric(/^queue_process_resident_memory_bytes /)).toBeGreaterThan(0);
  });

  // Issue 32, item 3: answers are counted from Fastify's log controller as each leaves, which Fastify
  // calls only with a logger: a runtime given none gets a silent one, and counts all the same.
  it("count answers of a runtime built without a logger", async () => {
    const app = await buildQueueRuntime({ manifest: await readFile(stack.manifestPath), rpcUrl: stack.rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR, store: ":memory:", logger: false });
    try {
      expect((await app.inject("/api/queue/config")).statusCode).toBe(200);
      expect((await app.inject("/api/queue/send-status?id=op_nope")).statusCode).toBe(404);
      const text = (await app.inject("/metrics")).body;
      expect(text).toMatch(/^queue_http_requests_total\{method="GET",route="\/api\/queue\/config",status="200"\} 1$/m);
      expect(text).toMatch(/^queue_http_requests_total\{method="GET",route="\/api\/queue\/send-status",status="404"\} 1$/m);
      expect(text).toMatch(/^queue_http_request_duration_seconds_count\{method="GET",route="\/api\/queue\/config"\} 1$/m);
    } finally {
      await app.close();
    }
  });
});
