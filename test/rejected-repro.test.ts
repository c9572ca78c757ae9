import path from "node:path";
import { execa } from "execa";
import { keccak256, type Address } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { createQueueClient, reviewedFrom, toRelayRequest } from "../harness/client/index.ts";
import { CIRCUIT_BUILD_DIR, manifestBytes } from "../harness/deployment/index.ts";
import { createChainClient } from "../src/chain/client.ts";
import { buildQueueRuntime, relayControl } from "../src/server.ts";
import type { Operation } from "../src/schemas/operation.ts";
import type { RelayRequest } from "../src/schemas/request.ts";
import { SqliteOperationStore } from "../src/store/store.ts";
import type { OperationRecord } from "../src/store/types.ts";
import { VARIANTS_PATH } from "./support/patch-variants.ts";
import { poolFixture, provenSend } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { rpc } from "./support/rpc.ts";
import { withStacks } from "./support/stacks.ts";
import { withTempDirs } from "./support/temp-dirs.ts";
import { builtCli } from "./support/cli.ts";

// Issue 40, item 2: the natural repro of a Pool bug. The buggy Pool (PoolFeeOffByOne) patched in, a
// fee-paying send is refused at admission (422 simulation_failed, FeeTooHigh): a dev stack keeps it as a
// rejected operation that the refusal names, so replay, trace, save and the bisect recipe take it. Item 4:
// the CLI traces it as stack.trace does. Item 6: on the stack loaded from its bundle, undo puts back the
// bundle's Pool, not the one from before the bundle's patch.
const tempDir = withTempDirs();
const startStack = withStacks();
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
withQueueStack({}, (s) => ({ stack, pool } = s));
/** A client that reviewed the deployment as it is now: a patch changes the Pool's code hash in the manifest. */
const queueNow = () => createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });

const variant = (contract: string) => `${VARIANTS_PATH}:${contract}`;
const CLI = builtCli();
const cli = (...args: string[]) => execa(process.execPath, [...CLI, ...args], { reject: false });

async function sendRelay(on: DevStack, request: RelayRequest, key?: string) {
  const response = await fetch(`${on.queueUrl}/api/queue/send-relay`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { "idempotency-key": key } : {}) },
    body: JSON.stringify(request),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> & { operationId?: string } };
}
const codeHash = async (on: DevStack) => keccak256((await createChainClient(on.rpcUrl).getCode({ address: on.manifest.poolAddress as Address })) ?? "0x");
const sendStatus = async (on: DevStack, id: string) => (await fetch(`${on.queueUrl}/api/queue/send-status?id=${id}`)).json() as Promise<Operation>;

describe("a send the patched Pool refuses at admission", () => {
  /** The Pool as deployed, before any patch. */
  let originalPool: string;
  let request: RelayRequest;
  let refused: string;
  let bundle: string;

  it("is kept as a rejected operation that the 422 names and the status route answers; it holds neither its nullifiers nor its idempotency key", async () => {
    originalPool = await codeHash(stack);
    await stack.patch("Pool", variant("PoolFeeOffByOne"));
    const { config, transaction } = await provenSend(stack, pool, queueNow(), 2);
    request = toRelayRequest(config, transaction);
    const head = Number(await rpc<string>(stack.rpcUrl, "eth_blockNumber"));
    const first = await sendRelay(stack, request, "repro-1");
    expect(first).toMatchObject({ status: 422, body: { code: "simulation_failed", revert: { name: "FeeTooHigh" }, operationId: expect.stringMatching(/^op_[0-9a-f]{32}$/) } });
    refused = first.body.operationId as string;

    const op = await sendStatus(stack, refused);
    expect(op).toMatchObject({ id: refused, kind: "send", state: "rejected", terminal: true, transactions: [], transactionHash: null, block: null, confirmations: 0 });
    expect(op.reason).toMatchObject({ code: "simulation_failed", revert: { name: "FeeTooHigh", args: [transaction.extData.fee.toString(), "0"] } });
    expect(op.history).toEqual([{ state: "rejected", at: op.createdAt, detail: expect.stringContaining("refused at admission (simulation_failed)"), block: head }]);
    expect(op.nullifiers).toEqual(request.publicInputs.inputNullifiers);

    // The same request under the same key is judged afresh: refused again, kept again, the key bound to neither.
    const again = await sendRelay(stack, request, "repro-1");
    expect(again).toMatchObject({ status: 422, body: { code: "simulation_failed", operationId: expect.stringMatching(/^op_/) } });
    expect(again.body.operationId).not.toBe(refused);
    // A withdraw-status poll of a send is not found, as for any send.
    expect((await fetch(`${stack.queueUrl}/api/queue/withdraw-status?id=${refused}`)).status).toBe(404);
  });

  it("is traced as its call on the block it was refused at (by the CLI too), listed and opened on the dashboard, and replayed: exit 1 on the buggy Pool", async () => {
    const trace = await stack.trace(refused);
    const { history } = await sendStatus(stack, refused);
    expect(trace).toMatchObject({ transactionHash: null, block: history[0]?.block, error: expect.stringMatching(/^FeeTooHigh\(\d+, 0\)$/), root: { contract: "Pool", function: "transact" } });
    // Item 4: the CLI traces it as stack.trace does, as its call on the block it was refused at.
    const printed = await cli("trace", refused, "--state-dir", stack.stateDir);
    expect(printed.exitCode, printed.stderr).toBe(0);
    const { reason } = await sendStatus(stack, refused);
    expect(printed.stdout).toBe(`operation ${refused} (rejected), never mined: its call on the state of block ${history[0]?.block}\nfailed: simulation_failed: ${reason?.detail}\n${trace.text}`);

    const list = await (await fetch(`${stack.queueUrl}/api/dev/dashboard/ops`)).text();
    expect(list).toContain(`id="op-${refused}"`);
    expect(list).toMatch(new RegExp(`id="op-${refused}" class="op" data-state="rejected"`));
    expect(list).toContain(`/dashboard/trace?id=${refused}`);
    const shown = await (await fetch(`${stack.queueUrl}/api/dev/dashboard/trace?id=${refused}`)).text();
    expect(shown).toMatch(/^Pool\.transact {2}\[\d+ gas\] {2}&#60;- reverted: FeeTooHigh\(\d+, 0\)/);

    const replay = await cli("replay", refused, "--state-dir", stack.stateDir);
    expect(replay.exitCode, replay.stderr).toBe(1);
    expect(replay.stdout).toContain("FeeTooHigh");

    bundle = path.join(await tempDir("devstack-rejected-bundle-"), "refused.qdbundle");
    await stack.save(bundle);
  });

  it("a stack loaded from the saved bundle replays it too: exit 1, then 0 once the fixed Pool is patched in; undo puts back the bundle's Pool, then the deployed one", async () => {
    const loaded = await startStack({ load: bundle, stateDir: await tempDir("devstack-rejected-loaded-") });
    expect(await sendStatus(loaded, refused)).toMatchObject({ id: refused, state: "rejected", reason: { revert: { name: "FeeTooHigh" } } });
    // A block before any patch, so that the original's call keeps the failing code (docs/replay.md).
    await rpc(loaded.rpcUrl, "evm_mine");
    expect((await cli("replay", refused, "--state-dir", loaded.stateDir)).exitCode).toBe(1);
    const [bundled] = loaded.patches();
    expect(bundled).toMatchObject({ name: "Pool", source: variant("PoolFeeOffByOne") });
    await loaded.patch("Pool", variant("PoolFixed"));
    const fixed = await cli("replay", refused, "--state-dir", loaded.stateDir);
    expect(fixed.exitCode, fixed.stdout).toBe(0);
    expect(fixed.stdout).toMatch(/^first difference: Pool\.transact/m);

    // Item 6: undo goes back to the code the stack started with, the bundle's (docs/bisect.md), not the Pool from before its patch.
    const undo = await cli("patch", "--undo", "Pool", "--state-dir", loaded.stateDir);
    expect(undo.exitCode, undo.stderr).toBe(0);
    expect(undo.stdout).toContain(`code ${bundled?.codeHash} again, as loaded (${variant("PoolFeeOffByOne")})`);
    expect(await codeHash(loaded)).toBe(bundled?.codeHash);
    expect(loaded.patches()).toEqual([bundled]);
    expect(loaded.manifest.poolRuntimeCodeHash).toBe(bundled?.codeHash);
    expect((await cli("replay", refused, "--state-dir", loaded.stateDir)).exitCode).toBe(1);
    // Patched with the bundle's very code (as a bisect's last step may be), undo still puts back the bundle's patch.
    await loaded.patch("Pool", variant("PoolFeeOffByOne"));
    expect(await loaded.unpatch("Pool")).toMatchObject({ codeHash: bundled?.codeHash, source: bundled?.source, previousCodeHash: bundled?.codeHash });
    expect(loaded.patches()).toEqual([bundled]);
    // A reset keeps it (a patch is part of the baseline); undone once more, the Pool is as deployed.
    await loaded.reset();
    expect(await codeHash(loaded)).toBe(bundled?.codeHash);
    const deployed = await loaded.unpatch("Pool");
    expect(deployed).toMatchObject({ source: "(as deployed)", previousCodeHash: bundled?.codeHash, codeHash: originalPool });
    expect(await codeHash(loaded)).toBe(originalPool);
    expect(loaded.patches()).toEqual([]);
    await loaded.stop();
  });

  it("once the fixed Pool is patched in, the replay exits 0 and the same request, under the same key, is relayed", async () => {
    await rpc(stack.rpcUrl, "evm_mine");
    await stack.patch("Pool", variant("PoolFixed"));
    const replay = await cli("replay", refused, "--state-dir", stack.stateDir);
    expect(replay.exitCode, replay.stdout).toBe(0);
    const accepted = await sendRelay(stack, request, "repro-1");
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    expect((await queueNow().waitFor("send", accepted.body.id as string)).state).toBe("confirmed");
  });
});

describe("what keeps refusals", () => {
  const refusedRecord = (n: number, at: string): OperationRecord => ({
    id: `op_refused_${n}`,
    kind: "send",
    state: "rejected",
    idempotencyKey: null,
    requestHash: `hash-${n}`,
    request: {} as RelayRequest,
    nullifiers: [`${n}`, `${n + 1000}`],
    reason: { code: "simulation_failed", detail: "reverted" },
    attempts: [],
    minedHash: null,
    block: null,
    history: [{ state: "rejected", at }],
    createdAt: at,
    updatedAt: at,
  });

  it("the store keeps the newest refusals up to its cap, and never deletes another operation", () => {
    const store = new SqliteOperationStore(":memory:");
    try {
      const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
      // An operation the engine rejected (its history begins accepted) is not a kept refusal.
      const engineRejected: OperationRecord = { ...refusedRecord(0, at(0)), id: "op_engine", state: "accepted", history: [{ state: "accepted", at: at(0) }] };
      expect(store.insert(engineRejected)).toEqual({ ok: true });
      store.save({ ...engineRejected, state: "rejected", history: [...engineRejected.history, { state: "rejected", at: at(0) }] });
      for (let i = 1; i <= 8; i++) store.insertRefused(refusedRecord(i, at(i)), 3);
      expect(store.newestFirst({ limit: 100 }).map((op) => op.id)).toEqual(["op_refused_8", "op_refused_7", "op_refused_6", "op_engine"]);
      // Kept refusals claim nothing: their nullifiers are free for a new operation.
      expect(store.claim("8")).toBeUndefined();
    } finally {
      store.close();
    }
  });

  it("an operator's runtime (no keepRejected) keeps none: the refusal names no operation", async () => {
    // The stack's relayer, in a runtime of its own (built as src/main.ts builds one), against the buggy Pool.
    await stack.patch("Pool", variant("PoolFeeOffByOne"));
    try {
      const key = mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 1 }).getHdKey().privateKey as Uint8Array;
      const app = await buildQueueRuntime({ manifest: manifestBytes(stack.manifest), rpcUrl: stack.rpcUrl, artifactsDir: CIRCUIT_BUILD_DIR, relayerPrivateKey: `0x${Buffer.from(key).toString("hex")}` });
      try {
        const { config, transaction } = await provenSend(stack, pool, queueNow(), 3);
        const answer = await app.inject({ method: "POST", url: "/api/queue/send-relay", payload: toRelayRequest(config, transaction) as object });
        expect(answer.statusCode).toBe(422);
        expect(answer.json()).toMatchObject({ code: "simulation_failed", revert: { name: "FeeTooHigh" } });
        expect(answer.json()).not.toHaveProperty("operationId");
        expect(relayControl(app)?.newestFirst({ limit: 10 })).toEqual([]);
      } finally {
        await app.close();
      }
    } finally {
      await stack.patch("Pool", variant("PoolFixed"));
    }
  });
});
