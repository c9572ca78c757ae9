import { describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import {
  ConfigMismatchError,
  createAccountKeys,
  createQueueClient,
  memoryJournal,
  PendingOperationError,
  QueueProblemError,
  recipientOf,
  reviewedFrom,
} from "../harness/client/index.ts";
import { poolFixture } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { rpc } from "./support/rpc.ts";

// The typed client and spec rules 6 to 8, against real runtimes. Two stacks stand for an old and a
// new deployment behind the same base URL.
let oldStack: DevStack;
let newStack: DevStack;
withQueueStack({ client: false }, (started) => ({ stack: oldStack } = started));
// A fork deploys from later nonces: another Pool address, i.e. another deployment.
withQueueStack({ client: false, options: () => ({ forkUrl: oldStack.rpcUrl }) }, (started) => ({ stack: newStack } = started));

describe("the queue client", () => {
  it("rule 6: refuses a config that differs from the reviewed deployment, naming each difference", async () => {
    const reviewed = { ...reviewedFrom(oldStack.manifest), poolRuntimeCodeHash: `0x${"ab".repeat(32)}` as const, verificationKeySha256: `0x${"cd".repeat(32)}` as const };
    const client = createQueueClient({ baseUrl: oldStack.queueUrl, reviewed });
    const error = await client.beforePrepare().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigMismatchError);
    expect((error as ConfigMismatchError).differences.map((d) => d.split(":")[0])).toEqual(["poolRuntimeCodeHash", "verificationKeySha256", "verificationKeySha256 (artifact)"]);
    const ok = createQueueClient({ baseUrl: oldStack.queueUrl, reviewed: reviewedFrom(oldStack.manifest) });
    expect((await ok.beforePrepare()).poolAddress).toBe(oldStack.manifest.poolAddress);
  });

  it("rules 7 and 8: keeps chain and Pool with each operation id, and settles a pending one before preparing under a new config", async () => {
    const pool = await poolFixture(oldStack);
    const journal = memoryJournal();
    let baseUrl = oldStack.queueUrl;
    const routed: typeof fetch = (input, init) => fetch(new URL(new URL(String(input)).pathname + new URL(String(input)).search, baseUrl), init);
    const client = createQueueClient({ baseUrl: "http://queue.invalid", reviewed: reviewedFrom(oldStack.manifest), journal, fetch: routed });

    const keys = createAccountKeys();
    const config = await client.beforePrepare();
    const { state, input } = await pool.fundedNote(2, keys, pool.usdc("3"));
    const fee = BigInt(config.relayFees.fees[0]?.send ?? "0");
    const { transaction } = await pool.prove({ tree: state.tree, keys, inputs: [input], outputs: [{ amount: pool.usdc("3") - fee, to: recipientOf(keys) }], fee, relayer: oldStack.relayer.address });
    await rpc(oldStack.rpcUrl, "evm_setAutomine", [false]);
    const op = await client.submit("send", config, transaction);
    expect((await journal.list())[0]).toMatchObject({ id: op.id, chainId: config.chainId, poolAddress: config.poolAddress, terminal: false });

    // The base URL now serves another deployment, reviewed by the app: the old operation must be settled first.
    baseUrl = newStack.queueUrl;
    const next = createQueueClient({ baseUrl: "http://queue.invalid", reviewed: reviewedFrom(newStack.manifest), journal, fetch: routed });
    await expect(next.beforePrepare()).rejects.toBeInstanceOf(PendingOperationError);
    await expect(next.beforePrepare()).rejects.toThrow(/check whether it reached the chain/);

    // Back where it lives, the original operation is checked and settles; then preparing is allowed.
    baseUrl = oldStack.queueUrl;
    await expect(next.beforePrepare()).rejects.toThrow(ConfigMismatchError); // the old config is not the reviewed new one
    await rpc(oldStack.rpcUrl, "evm_setAutomine", [true]);
    await rpc(oldStack.rpcUrl, "evm_mine");
    expect((await client.waitFor("send", op.id)).state).toBe("confirmed");
    baseUrl = newStack.queueUrl;
    expect((await next.beforePrepare()).poolAddress).toBe(newStack.manifest.poolAddress);
  });

  it("surfaces problems with their code", async () => {
    const client = createQueueClient({ baseUrl: oldStack.queueUrl, reviewed: reviewedFrom(oldStack.manifest) });
    const error = await client.status("send", "op_missing").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueueProblemError);
    expect(error).toMatchObject({ status: 404, code: "operation_not_found" });
  });
});
