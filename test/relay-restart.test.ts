import path from "node:path";
import type { ResultPromise } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import type { Operation } from "../src/schemas/operation.ts";
import { provenRequest, type poolFixture } from "./support/pool.ts";
import { rpc } from "./support/rpc.ts";
import { withRuntimeProcesses } from "./support/runtime-process.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// The runtime as its own process with a durable store, killed with SIGKILL mid-flight and started again.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
// Each runtime is SIGKILLed after its test; the stores' folder is removed after the file.
const runtimes = withRuntimeProcesses("queue-store-");

withQueueStack({}, (started) => ({ stack, pool } = started));
afterEach(async () => {
  await runtimes.kill();
  await rpc(stack.rpcUrl, "evm_setAutomine", [true]);
});

async function startRuntime(store: string): Promise<{ url: string; child: ResultPromise }> {
  return runtimes.start(stack, ["--store", store, "--stuck-after-ms", "60000"]);
}

const request = () => provenRequest(stack, pool, { toSelf: true });

const status = async (url: string, id: string) => (await (await fetch(`${url}/api/queue/send-status?id=${id}`)).json()) as Operation;
async function until(url: string, id: string, done: (op: Operation) => boolean): Promise<Operation> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const op = await status(url, id);
    if (done(op)) return op;
    if (Date.now() > deadline) throw new Error(`operation ${id} stuck in ${op.state}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
const nonce = async () => Number(await rpc<string>(stack.rpcUrl, "eth_getTransactionCount", [stack.relayer.address, "latest"]));
const submit = async (url: string, body: unknown) =>
  (await (await fetch(`${url}/api/queue/send-relay`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).json()) as Operation;

describe("a runtime killed with SIGKILL and started again", () => {
  it("finds a broadcast operation, re-broadcasts the same transaction when the node lost it, and sends nothing twice", async () => {
    const store = path.join(runtimes.dir, "broadcast.sqlite");
    const body = await request();
    const nonceBefore = await nonce();
    await rpc(stack.rpcUrl, "evm_setAutomine", [false]);

    const first = await startRuntime(store);
    const accepted = await submit(first.url, body);
    const submitted = await until(first.url, accepted.id, (o) => o.state === "submitted");
    const hash = submitted.transactions[0]?.hash as string;
    first.child.kill("SIGKILL");
    await first.child;

    // The node forgets the pending transaction too (as after a node restart).
    await rpc(stack.rpcUrl, "anvil_dropTransaction", [hash]);
    expect(await rpc(stack.rpcUrl, "eth_getTransactionByHash", [hash])).toBeNull();

    const second = await startRuntime(store);
    const recovered = await status(second.url, accepted.id);
    expect(recovered.state).toBe("submitted");
    expect(recovered.transactions.map((t) => t.hash)).toEqual([hash]);
    // Re-broadcast: the same signed bytes, so the same hash, back in the node's pool.
    const deadline = Date.now() + 10_000;
    while ((await rpc(stack.rpcUrl, "eth_getTransactionByHash", [hash])) === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await rpc(stack.rpcUrl, "eth_getTransactionByHash", [hash])).not.toBeNull();

    await rpc(stack.rpcUrl, "evm_mine");
    const done = await until(second.url, accepted.id, (o) => o.terminal);
    expect(done.state).toBe("confirmed");
    expect(done.transactionHash).toBe(hash);
    expect(done.transactions).toHaveLength(1);
    expect(await nonce()).toBe(nonceBefore + 1);
  });

  it("finds an operation accepted just before the kill, and processes it once", async () => {
    const store = path.join(runtimes.dir, "accepted.sqlite");
    const bodies = [await request(), await request()];
    const nonceBefore = await nonce();
    await rpc(stack.rpcUrl, "evm_setAutomine", [false]);
    const first = await startRuntime(store);
    // Kill right after the 202s, wherever the engine is: before signing, or between persisting and broadcasting.
    const accepted = await Promise.all(bodies.map((b) => submit(first.url, b)));
    first.child.kill("SIGKILL");
    await first.child;

    const second = await startRuntime(store);
    for (const op of accepted) expect((await status(second.url, op.id)).state).not.toBe("rejected");
    await rpc(stack.rpcUrl, "evm_setAutomine", [true]);
    await rpc(stack.rpcUrl, "evm_mine");
    for (const op of accepted) {
      const done = await until(second.url, op.id, (o) => o.terminal);
      expect(done.state).toBe("confirmed");
    }
    expect(await nonce()).toBe(nonceBefore + 2);
  });
});
