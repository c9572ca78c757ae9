import path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { createQueueClient, QueueProblemError, reviewedFrom, type QueueClient } from "../harness/client/index.ts";
import type { Operation } from "../src/schemas/operation.ts";
import { provenSend, type poolFixture } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { relayerNonce, withRuntimeProcesses } from "./support/runtime-process.ts";

// The operation store's disk full under the operator's runtime (its own process). The test machines
// run as root, which file modes do not stop, so the disk fills the way a process sees it: its file-size
// limit (RLIMIT_FSIZE, set on the running process with prlimit) drops to 0, and every write to a file
// fails (EFBIG; SQLite: disk I/O error), as on a full disk. Raising it again is the operator making room.
// A read-only filesystem is one the runtime starts on: a mount cannot turn read-only under files open for writing.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
withQueueStack({}, (started) => ({ stack, pool } = started));
const runtimes = withRuntimeProcesses("devstack-store-full-");

const fileSizeLimit = (pid: number, limit: number | "unlimited") => execa("prlimit", ["--pid", String(pid), `--fsize=${limit}:unlimited`]);
const health = async (url: string) => {
  const response = await fetch(`${url}/api/queue/health`);
  return { status: response.status, body: (await response.json()) as { checks: { store: { writable: boolean; detail: string | null } } } };
};

describe("an operation store that cannot be written", () => {
  it("nothing is accepted that cannot be stored, nothing is sent that was not stored; with room again, every operation is confirmed by one transaction", async () => {
    const store = path.join(runtimes.dir, "queue.sqlite");
    const runtime = await runtimes.start(stack, ["--store", store, "--rate-limit", "off"], { rpcUrl: stack.faults.rpcUrl });
    const pid = runtime.child.pid as number;
    const queue: QueueClient = createQueueClient({ baseUrl: runtime.url, reviewed: reviewedFrom(stack.manifest) });
    const [first, inFlight, refused] = await Promise.all([2, 3, 4].map((from) => provenSend(stack, pool, queue, from)));
    if (!first || !inFlight || !refused) throw new Error("three sends");

    const confirmed = await queue.waitFor("send", (await queue.submit("send", first.config, first.transaction)).id, { timeoutMs: 30_000 });
    expect(confirmed.state).toBe("confirmed");
    // One accepted and held before signing (its nonce read never answers)...
    stack.faults.rpc({ kind: "timeout", methods: ["eth_getTransactionCount"] });
    const held = await queue.submit("send", inFlight.config, inFlight.transaction);
    const nonceBefore = await relayerNonce(stack);

    // ...when the disk fills up.
    await fileSizeLimit(pid, 0);
    stack.faults.rpc(null);
    const answer = await queue.submit("send", refused.config, refused.transaction).catch((error: unknown) => error);
    expect(answer).toBeInstanceOf(QueueProblemError);
    expect(answer).toMatchObject({ status: 503, code: "store_unavailable" });
    expect((answer as QueueProblemError).problem.detail).toMatch(/cannot be written.*nothing was accepted/);
    const notReady = await health(runtime.url);
    expect(notReady.status).toBe(503);
    expect(notReady.body.checks.store.writable).toBe(false);
    // Reads go on; the held operation cannot record a signature, so none is sent.
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await queue.status("send", confirmed.id)).state).toBe("confirmed");
    expect(["accepted", "processing"]).toContain((await queue.status("send", held.id)).state);
    expect((await queue.status("send", held.id)).transactions).toEqual([]);
    expect(await relayerNonce(stack)).toBe(nonceBefore);

    // Room again: ready by itself, the held operation goes on, the refused one is accepted when sent again.
    await fileSizeLimit(pid, "unlimited");
    expect((await health(runtime.url)).status).toBe(200);
    const retried: Operation = await queue.submit("send", refused.config, refused.transaction); // not nullifier_in_flight: nothing was half-written
    const done = await Promise.all([held.id, retried.id].map((id) => queue.waitFor("send", id, { timeoutMs: 30_000 })));
    for (const op of done) {
      expect(op.state).toBe("confirmed");
      expect(op.transactions).toHaveLength(1);
    }
    expect(await relayerNonce(stack)).toBe(nonceBefore + 2);
  });

  it("a runtime whose store cannot be written does not start, and says why", async () => {
    const started = runtimes.start(stack, ["--store", path.join(runtimes.dir, "unwritable", "queue.sqlite")], { prefix: ["prlimit", "--fsize=0", "--"] });
    await expect(started).rejects.toThrow(/exited 1: .*operation store .*cannot be written/s);
  });

  it("a store on a read-only filesystem: the runtime does not start, and says why", async () => {
    // A store that exists, then its folder mounted read-only for the runtime alone (its own mount
    // namespace, gone with it): root cannot write there either.
    const folder = path.join(runtimes.dir, "read-only");
    const store = path.join(folder, "queue.sqlite");
    const first = await runtimes.start(stack, ["--store", store]);
    first.child.kill("SIGTERM");
    await first.child;
    const readOnly = ["unshare", "--mount", "--", "sh", "-c", `mount --bind '${folder}' '${folder}' && mount -o remount,bind,ro '${folder}' && exec "$0" "$@"`];
    await expect(runtimes.start(stack, ["--store", store], { prefix: readOnly })).rejects.toThrow(/exited 1: .*operation store .*cannot be written \(read-only filesystem\)/s);
  });
});
