import { parseAbi, type Address } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { createAccountKeys, QueueProblemError, syncPool, type QueueClient } from "../harness/client/index.ts";
import { createChainClient } from "../src/chain/client.ts";
import { poolFixture, provenSend as provenSendOf } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { ctlCli } from "./support/cli.ts";

// Faults between the runtime and anvil (/api/dev/rpc, /api/dev/revert-next): what a client sees.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let queue: QueueClient;

// A short chain timeout: a request whose chain read hangs is answered 503 soon.
withQueueStack({ options: { runtime: { chainTimeoutMs: 400 } } }, (s) => ({ stack, pool, queue } = s));
afterEach(() => stack.faults.clear());

const dev = async (path: string, body: unknown) => {
  const response = await fetch(`${stack.queueUrl}/api/dev/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};
const ctl = (...args: string[]) => ctlCli(stack.stateDir, ...args);

const provenSend = (from: number) => provenSendOf(stack, pool, queue, from);
const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(QueueProblemError);
  return (error as QueueProblemError).problem;
};

/**
 * A submit as a client makes it once a fault is off: again after a 503 chain_unavailable, as its
 * Retry-After says, a few times. This stack's chain timeout is 400 ms, which a loaded machine can exceed.
 */
async function submitOnceRecovered(...[kind, config, transaction]: Parameters<QueueClient["submit"]>) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await queue.submit(kind, config, transaction);
    } catch (error) {
      if (attempt === 5 || !(error instanceof QueueProblemError) || error.problem.code !== "chain_unavailable") throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

describe("RPC faults", () => {
  it("fail: a submission is a 503 chain_unavailable, status still answers; switched off from the CLI, the same submission goes through", async () => {
    const earlier = await provenSend(2);
    const confirmed = await queue.waitFor("send", (await queue.submit("send", earlier.config, earlier.transaction)).id);
    const { config, transaction } = await provenSend(3);

    const on = await ctl("rpc", "fail", "--json");
    expect(on.exitCode).toBe(0);
    expect(JSON.parse(on.stdout)).toMatchObject({ fault: "fail" });
    const problem = await refusal(queue.submit("send", config, transaction));
    expect(problem).toMatchObject({ status: 503, code: "chain_unavailable" });
    // Answered from the store: the client can still check its earlier operation (rule 8).
    expect((await queue.status("send", confirmed.id)).state).toBe("confirmed");

    expect((await ctl("rpc", "ok")).exitCode).toBe(0);
    expect((await queue.waitFor("send", (await queue.submit("send", config, transaction)).id)).state).toBe("confirmed");
  });

  it("fail for a while, on broadcasts only: the operation is accepted, waits, and is confirmed once the fault ends by itself", async () => {
    const { config, transaction } = await provenSend(4);
    expect((await dev("rpc", { fault: "fail", methods: ["eth_sendRawTransaction"], forMs: 1_500 })).body).toMatchObject({ fault: "fail", methods: ["eth_sendRawTransaction"], endsAt: expect.any(String) });
    const op = await queue.submit("send", config, transaction);
    await new Promise((r) => setTimeout(r, 700));
    expect(["accepted", "processing", "submitted"]).toContain((await queue.status("send", op.id)).state);
    expect((await queue.waitFor("send", op.id)).state).toBe("confirmed");
    expect(stack.faults.state().fault).toBe("none");
  });

  it("timeout: the runtime's chain reads get no answer, the client gets a 503 within the chain timeout; then it recovers", async () => {
    const { config, transaction } = await provenSend(5);
    stack.faults.rpc({ kind: "timeout" });
    const problem = await refusal(queue.submit("send", config, transaction));
    expect(problem).toMatchObject({ status: 503, code: "chain_unavailable" });
    stack.faults.rpc(null);
    expect((await queue.waitFor("send", (await submitOnceRecovered("send", config, transaction)).id)).state).toBe("confirmed");
  });

  it("delay: answers come late, and the operation still goes through; later than the chain timeout, it is a 503", async () => {
    const { config, transaction } = await provenSend(6);
    stack.faults.rpc({ kind: "delay", delayMs: 600 }); // past the 400 ms chain timeout
    expect(await refusal(queue.submit("send", config, transaction))).toMatchObject({ status: 503, code: "chain_unavailable" });
    expect((await ctl("rpc", "delay", "40")).exitCode).toBe(0);
    expect(stack.faults.state()).toMatchObject({ fault: "delay", delayMs: 40 });
    const started = Date.now();
    const op = await queue.submit("send", config, transaction);
    expect(Date.now() - started).toBeGreaterThanOrEqual(40); // it read the chain at least once, late
    expect((await queue.waitFor("send", op.id, { timeoutMs: 60_000 })).state).toBe("confirmed");
  });

  it("drop-logs: a client reading through the fault RPC sees no events, while the Pool's root tells it its tree is incomplete", async () => {
    await pool.fundedNote(7, createAccountKeys(), pool.usdc("1"));
    const args = { pool: stack.manifest.poolAddress as Address, fromBlock: BigInt(stack.manifest.deploymentBlock), levels: stack.manifest.queue.proof.treeDepth };
    const direct = await syncPool({ client: createChainClient(stack.rpcUrl), ...args });
    expect(direct.commitments.length).toBeGreaterThan(0);
    expect((await ctl("rpc", "drop-logs")).exitCode).toBe(0);
    const faulty = createChainClient(stack.faults.rpcUrl);
    const lost = await syncPool({ client: faulty, ...args });
    expect(lost.commitments).toEqual([]);
    // The defence: the tree built from the events must end at the Pool's last root.
    const lastRoot = await faulty.readContract({ address: args.pool, abi: parseAbi(["function getLastRoot() view returns (uint256)"]), functionName: "getLastRoot" });
    expect(lost.tree.root).not.toBe(lastRoot);
    expect(direct.tree.root).toBe(lastRoot);
    stack.faults.rpc(null);
    expect((await syncPool({ client: faulty, ...args })).commitments.length).toBe(direct.commitments.length);
  });

  it("unsupported: the methods given are answered as a node without them answers (-32601), the other calls of a batch go through", async () => {
    expect((await ctl("rpc", "unsupported")).exitCode).toBe(2); // which methods?
    expect(await dev("rpc", { fault: "unsupported" })).toMatchObject({ status: 400, body: { code: "invalid_request" } });
    const on = await ctl("rpc", "unsupported", "--methods", "eth_getBlockReceipts", "--json");
    expect(on.exitCode).toBe(0);
    expect(JSON.parse(on.stdout)).toMatchObject({ fault: "unsupported", methods: ["eth_getBlockReceipts"] });
    const rpc = async (body: unknown) => (await fetch(stack.faults.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).json();
    const call = (id: number, method: string, params: unknown[] = []) => ({ jsonrpc: "2.0", id, method, params });
    const lacking = { code: -32601, message: "the method eth_getBlockReceipts does not exist/is not available" };
    expect(await rpc(call(1, "eth_getBlockReceipts", ["latest"]))).toEqual({ jsonrpc: "2.0", id: 1, error: lacking });
    expect(await rpc([call(1, "eth_chainId"), call(2, "eth_getBlockReceipts", ["latest"]), call(3, "eth_blockNumber")])).toEqual([
      { jsonrpc: "2.0", id: 1, result: "0xaa36a7" },
      { jsonrpc: "2.0", id: 2, error: lacking },
      { jsonrpc: "2.0", id: 3, result: expect.stringMatching(/^0x[0-9a-f]+$/) },
    ]);
    expect(await rpc(call(4, "eth_chainId"))).toEqual({ jsonrpc: "2.0", id: 4, result: "0xaa36a7" }); // untouched, not parsed
    expect(() => stack.faults.rpc({ kind: "unsupported" })).toThrow(/needs methods/);
  });

  it("bad control input is a 400 problem, and the CLI refuses unknown faults", async () => {
    expect((await dev("rpc", { fault: "explode" })).status).toBe(400);
    expect((await dev("rpc", { fault: "fail", delayMs: 5 })).status).toBe(400);
    expect((await ctl("rpc", "explode")).exitCode).toBe(2);
  });
});

describe("revert the next relay", () => {
  it("the relay is mined and reverts InvalidProof(): the operation is reverted, the trace names the error, and the same request then goes through", async () => {
    const { config, transaction } = await provenSend(8);
    const armed = await ctl("revert-next", "--json");
    expect(armed.exitCode).toBe(0);
    expect(JSON.parse(armed.stdout)).toMatchObject({ revertNextRelay: true });
    const op = await queue.waitFor("send", (await queue.submit("send", config, transaction)).id);
    expect(op.state).toBe("reverted");
    expect(op.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(JSON.stringify(op)).toContain("InvalidProof");
    expect(stack.faults.state().revertNextRelay).toBe(false); // used up
    const trace = await stack.trace(op.id);
    expect(trace.error).toBe("InvalidProof()");
    // Over HTTP too, as the dev route serves it.
    const served = (await (await fetch(`${stack.queueUrl}/api/dev/trace?id=${op.id}`)).json()) as { error: string; transactionHash: string };
    expect(served).toMatchObject({ error: "InvalidProof()", transactionHash: op.transactionHash });
    expect((await fetch(`${stack.queueUrl}/api/dev/trace?id=op_nope`)).status).toBe(404);
    // The notes were not spent: the client may send the same request again.
    expect((await queue.waitFor("send", (await queue.submit("send", config, transaction)).id)).state).toBe("confirmed");
  });
});
