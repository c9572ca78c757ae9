import { readFile } from "node:fs/promises";
import type { FastifyInstance } from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import { CIRCUIT_BUILD_DIR } from "../harness/deployment/index.ts";
import type { DevStack } from "../harness/index.ts";
import type { Operation } from "../src/schemas/operation.ts";
import type { RelayRequest } from "../src/schemas/request.ts";
import { buildQueueRuntime } from "../src/server.ts";
import { RELAYER_KEY } from "./support/chain.ts";
import { poolFixture, provenRequest } from "./support/pool.ts";
import { rpc } from "./support/rpc.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { unprovedSend } from "./support/unproved-send.ts";

// A chain that stops answering (anvil frozen with SIGSTOP, a real process): status reads answer from
// the store at once, saying how old their head is; what needs the chain fails fast with a 503.
const CHAIN_TIMEOUT_MS = 1_000;
let stack: DevStack;
let app: FastifyInstance;
let frozen = false;
let confirmed: Operation;
let body: RelayRequest;
const KEY = "stall-test-key";

const freeze = () => {
  process.kill(stack.chainPid, "SIGSTOP");
  frozen = true;
};
const thaw = () => {
  if (frozen) process.kill(stack.chainPid, "SIGCONT");
  frozen = false;
};
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function status(id: string, kind: "send" | "withdraw" = "send") {
  const started = performance.now();
  const response = await app.inject({ method: "GET", url: `/api/queue/${kind}-status?id=${id}` });
  return { response, ms: performance.now() - started, op: response.json() as Operation };
}

withQueueStack({ client: false, timeout: 120_000 }, async (started) => {
  ({ stack } = started);
  app = await buildQueueRuntime({
    manifest: await readFile(stack.manifestPath), rpcUrl: stack.rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR, store: ":memory:",
    chainTimeoutMs: CHAIN_TIMEOUT_MS,
  });
  await app.ready();
  // One real send, relayed to confirmed.
  body = await provenRequest(stack, await poolFixture(stack));
  const accepted = await app.inject({ method: "POST", url: "/api/queue/send-relay", payload: body, headers: { "idempotency-key": KEY } });
  expect(accepted.statusCode).toBe(202);
  for (;;) {
    const { op } = await status(accepted.json().id);
    if (op.terminal) {
      expect(op.state).toBe("confirmed");
      confirmed = op;
      break;
    }
    await pause(50);
  }
});
afterAll(async () => {
  thaw();
  await app?.close();
});

describe("with the chain frozen (SIGSTOP)", () => {
  it("status answers come from the store at once, with the observed head and its age", async () => {
    expect(confirmed.observedHead).not.toBeNull();
    freeze();
    try {
      const first = await status(confirmed.id);
      expect(first.response.statusCode).toBe(200);
      expect(first.ms).toBeLessThan(CHAIN_TIMEOUT_MS); // it did not wait on the chain
      expect(first.op).toMatchObject({ id: confirmed.id, state: "confirmed", terminal: true });
      const head = first.op.observedHead;
      expect(head).not.toBeNull();
      expect(head?.number).toBeGreaterThanOrEqual(confirmed.block?.number as number);
      expect(first.op.confirmations).toBe((head?.number as number) - (confirmed.block?.number as number) + 1);

      // Time passes with no head: the same head, older, still at once.
      await pause(CHAIN_TIMEOUT_MS + 300);
      const later = await status(confirmed.id);
      expect(later.response.statusCode).toBe(200);
      expect(later.ms).toBeLessThan(CHAIN_TIMEOUT_MS);
      expect(later.op.observedHead).toMatchObject({ number: head?.number, observedAt: head?.observedAt });
      expect(later.op.observedHead?.ageMs).toBeGreaterThanOrEqual(CHAIN_TIMEOUT_MS + 300);
      expect(later.op.confirmations).toBe(first.op.confirmations);

      // Not found is decided by the store alone too.
      const other = await status(confirmed.id, "withdraw");
      expect(other.response.statusCode).toBe(404);
      expect(other.ms).toBeLessThan(CHAIN_TIMEOUT_MS);
    } finally {
      thaw();
    }
  });

  it("an idempotent retry of a stored submission answers at once from the store", async () => {
    freeze();
    try {
      const started = performance.now();
      const again = await app.inject({ method: "POST", url: "/api/queue/send-relay", payload: body, headers: { "idempotency-key": KEY } });
      expect(performance.now() - started).toBeLessThan(CHAIN_TIMEOUT_MS);
      expect(again.statusCode).toBe(202);
      expect(again.json()).toMatchObject({ id: confirmed.id, state: "confirmed" });
    } finally {
      thaw();
    }
  });

  it("relay submissions and /assets answer 503 chain_unavailable with Retry-After within the chain timeout", async () => {
    freeze();
    try {
      for (const request of [
        { method: "POST" as const, url: "/api/queue/send-relay", payload: unprovedSend(stack, { inputNullifiers: ["21", "22"], outputCommitments: ["23", "24"] }) },
        { method: "GET" as const, url: "/api/queue/assets" },
        { method: "GET" as const, url: `/api/queue/assets?blockNumber=${confirmed.block?.number}` },
      ]) {
        const started = performance.now();
        const answer = await app.inject(request);
        const ms = performance.now() - started;
        expect(answer.statusCode, request.url).toBe(503);
        expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
        expect(answer.json().code).toBe("chain_unavailable");
        expect(Number(answer.headers["retry-after"])).toBeGreaterThan(0);
        expect(ms, request.url).toBeLessThan(2 * CHAIN_TIMEOUT_MS);
      }
    } finally {
      thaw();
    }
  });

  it("once the chain answers again, the observed head moves on", async () => {
    const before = (await status(confirmed.id)).op;
    await rpc(stack.rpcUrl, "evm_mine");
    const deadline = Date.now() + 15_000;
    let op = before;
    while ((op.observedHead?.number ?? 0) <= (before.observedHead?.number ?? 0) && Date.now() < deadline) {
      await pause(100);
      op = (await status(confirmed.id)).op;
    }
    expect(op.observedHead?.number).toBeGreaterThan(before.observedHead?.number as number);
    expect(op.confirmations).toBeGreaterThan(before.confirmations);
  });
});
