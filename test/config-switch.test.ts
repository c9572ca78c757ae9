import { describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { ConfigMismatchError, createQueueClient, PendingOperationError, QueueProblemError, reviewedFrom } from "../harness/client/index.ts";
import type { DeploymentConfig } from "../src/config/deployment-config.ts";
import { type poolFixture, provenSend } from "./support/pool.ts";
import { rpc } from "./support/rpc.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { ctlCli } from "./support/cli.ts";

// The served configuration changes while a payment is pending (spec rules 7 and 8), and back: what a
// client sees, and how it settles the old deployment's operation before preparing another.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;

withQueueStack({}, (started) => ({ stack, pool } = started));

const ctl = (...args: string[]) => ctlCli(stack.stateDir, ...args);
const served = async () => {
  const response = await fetch(`${stack.queueUrl}/api/queue/config`);
  return { etag: response.headers.get("etag"), config: (await response.json()) as DeploymentConfig };
};

describe("the served configuration changes mid-flight", () => {
  it("a new Pool is served; the old deployment's pending operation is still answered and settled; the client waits for it, then moves on; and back", async () => {
    const before = await served();
    const queue = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
    const { config, transaction } = await provenSend(stack, pool, queue, 2);
    expect((await ctl("relayer", "pause")).exitCode).toBe(0); // pending while the configuration changes
    const op = await queue.submit("send", config, transaction);

    const switched = await ctl("config", "alternate", "--json");
    expect(switched.exitCode).toBe(0);
    expect(JSON.parse(switched.stdout)).toMatchObject({ serving: "alternate" });
    const now = await served();
    expect(now.config.poolAddress).not.toBe(before.config.poolAddress);
    expect(now.config.relayFees.relayer).not.toBe(before.config.relayFees.relayer);
    expect(now.etag).not.toBe(before.etag);
    expect(await rpc(stack.rpcUrl, "eth_getCode", [now.config.poolAddress, "latest"])).not.toBe("0x");

    // The client reviewed the old deployment: it refuses the new configuration (rule 6)...
    await expect(queue.beforePrepare()).rejects.toThrow(ConfigMismatchError);
    // ...a request made for the old deployment is refused by the new one...
    const refused = await queue.submit("send", config, transaction).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(QueueProblemError);
    expect((refused as QueueProblemError).code).toBe("deployment_mismatch");
    // ...and the app updated for the new deployment, with the same journal, first settles the old operation (rule 8).
    const updated = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(now.config), journal: queue.journal });
    expect((await updated.status("send", op.id)).deployment.poolAddress).toBe(before.config.poolAddress);
    await expect(updated.beforePrepare()).rejects.toThrow(PendingOperationError);
    expect((await ctl("relayer", "resume")).exitCode).toBe(0);
    expect((await updated.waitFor("send", op.id)).state).toBe("confirmed"); // relayed by the old deployment's runtime
    expect((await updated.beforePrepare()).poolAddress).toBe(now.config.poolAddress);

    // And back: the original configuration, byte for byte.
    expect((await ctl("config", "original")).exitCode).toBe(0);
    const back = await served();
    expect(back.etag).toBe(before.etag);
    expect((await queue.beforePrepare()).poolAddress).toBe(before.config.poolAddress);
    expect(stack.faults.serving()).toBe("original");
  });

  it("a reset goes back to the original deployment", async () => {
    await stack.faults.serve("alternate");
    expect((await served()).config.poolAddress).not.toBe(stack.manifest.poolAddress);
    await stack.reset();
    expect((await served()).config.poolAddress).toBe(stack.manifest.poolAddress);
    expect(stack.faults.serving()).toBe("original");
  });

  // Found by the reset property test (issue 40): the alternate deployment's runtime checks its chain
  // through the runtime's RPC, and with a dev RPC fault on that was thrown as it came: a 500.
  it("the alternate asked while the runtime's RPC fails, or while the deployer's reorged transactions wait in a held mempool: 503 chain_unavailable, the original still served", async () => {
    await stack.reset();
    const post = async () => {
      const response = await fetch(`${stack.queueUrl}/api/dev/config`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ serve: "alternate" }) });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    stack.faults.rpc({ kind: "fail" });
    try {
      expect(await post()).toMatchObject({ status: 503, body: { code: "chain_unavailable" } });
    } finally {
      stack.faults.rpc(null);
    }
    expect((await served()).config.poolAddress).toBe(stack.manifest.poolAddress);
    expect(await post()).toMatchObject({ status: 200, body: { serving: "alternate" } });
    await stack.reset();
    // Mining held and the deployment's block reorged: its transactions wait in the mempool, holding the
    // deployer's nonces, and the copy is never mined. That was a 500 too.
    const dev = (path: string, body: unknown) => fetch(`${stack.queueUrl}/api/dev/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    await dev("mining", { mode: "hold" });
    await dev("reorg", { depth: Number(await rpc<string>(stack.rpcUrl, "eth_blockNumber")) });
    expect(await post()).toMatchObject({ status: 503, body: { code: "chain_unavailable", detail: expect.stringContaining("release mining") } });
    await stack.reset();
    expect((await served()).config.poolAddress).toBe(stack.manifest.poolAddress);
  });
});
