import { execFileSync } from "node:child_process";
import { chromium, type Browser } from "playwright-core";
import { execa } from "execa";
import { encodeAbiParameters, keccak256, type Address, type Hex } from "viem";
import { afterAll, describe, expect, it } from "vitest";
import type { DevStack, ReplayAnswer, TracedCall } from "../harness/index.ts";
import { createAccountKeys, poolAbi, recipientOf, toRelayRequest, type QueueClient } from "../harness/client/index.ts";
import { diffTraces } from "../harness/replay/index.ts";
import { dashboardReplayHtml, operationHtml } from "../harness/dashboard/index.ts";
import type { Operation } from "../src/schemas/operation.ts";
import type { OperationRecord } from "../src/store/types.ts";
import { poolFixture, provenSend } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { hex, nodeHolds, rpc } from "./support/rpc.ts";
import { withTempDirs } from "./support/temp-dirs.ts";
import { builtCli } from "./support/cli.ts";

// Issue 33, item 2: an operation replayed on the chain as it is now, through the relayer's own checks and
// simulation, its trace diffed against the original's. Real failures, made without a patched contract:
// a relay that reverts because its note was spent first, and one rejected before broadcast because the
// verifier changed while it waited.
const tempDir = withTempDirs();
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let queue: QueueClient;
withQueueStack({ options: { relay: { stuckAfterMs: 60_000 } } }, (s) => ({ stack, pool, queue } = s));

/** `queue-devstack replay …` as a user runs it, in its own process. */
const replayCli = (...args: string[]) =>
  execa(process.execPath, [...builtCli(), "replay", ...args, ...(args.includes("--state-dir") ? [] : ["--state-dir", stack.stateDir])], { reject: false });
const devPost = async (path: string, body: unknown) => {
  const response = await fetch(`${stack.queueUrl}/api/dev/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, type: response.headers.get("content-type"), body: (await response.json()) as Record<string, unknown> };
};
const status = async (id: string) => (await (await fetch(`${stack.queueUrl}/api/queue/send-status?id=${id}`)).json()) as Operation;
async function until(id: string, done: (op: Operation) => boolean): Promise<Operation> {
  for (const deadline = Date.now() + 30_000; ; ) {
    const op = await status(id);
    if (done(op)) return op;
    if (Date.now() > deadline) throw new Error(`operation ${id} stuck in ${op.state}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A send whose relay is mined and reverts NullifierSpent: mining held, someone spends the same note
 * directly with a higher tip, mined first (as in the engine's tests). `spentAt` is the direct spend's
 * block: the relay's own may be a later one (a fee bump sent after the block was mined, on a loaded
 * machine), so "before the race" is the block before `spentAt`.
 */
async function revertedByARace(): Promise<{ op: Operation; nullifier: bigint; spentAt: number }> {
  const keys = createAccountKeys();
  const { state, input } = await pool.fundedNote(2, keys, pool.usdc("3"));
  const fee = BigInt(stack.manifest.relayFees.fees[0]?.send ?? "0");
  const viaQueue = await pool.prove({ tree: state.tree, keys, inputs: [input], outputs: [{ amount: pool.usdc("3") - fee, to: recipientOf(keys) }], fee, relayer: stack.relayer.address });
  const direct = await pool.prove({ tree: state.tree, keys, inputs: [input], outputs: [{ amount: pool.usdc("3"), to: recipientOf(keys) }] });
  await rpc(stack.rpcUrl, "evm_setAutomine", [false]);
  let id: string;
  let spend: Hex;
  try {
    id = (await queue.submit("send", await queue.beforePrepare(), viaQueue.transaction)).id;
    const submitted = await until(id, (o) => o.state === "submitted");
    const attempt = submitted.transactions[0] as Operation["transactions"][number];
    await nodeHolds(stack.rpcUrl, attempt.hash); // broadcast after it was stored: the block below must include it
    const tip = BigInt(attempt.maxPriorityFeePerGas) * 10n;
    spend = await pool.user(5).wallet.writeContract({
      address: stack.manifest.poolAddress as Address, abi: poolAbi, functionName: "transact", args: [direct.transaction.proof, direct.transaction.publicInputs, direct.transaction.extData],
      gas: 3_000_000n, maxPriorityFeePerGas: tip, maxFeePerGas: tip * 4n + BigInt(attempt.maxFeePerGas),
    });
    await rpc(stack.rpcUrl, "evm_mine");
  } finally {
    await rpc(stack.rpcUrl, "evm_setAutomine", [true]);
  }
  const op = await until(id, (o) => o.terminal);
  const spentAt = Number((await pool.user(5).public.waitForTransactionReceipt({ hash: spend })).blockNumber);
  return { op, nullifier: BigInt(op.nullifiers[0] as string), spentAt };
}

/** Pool.nullifierSpent[n]'s storage key: the mapping's slot found by probing (the fixtures' build keeps no storage layout). */
async function nullifierKey(nullifier: bigint): Promise<Hex> {
  for (let slot = 0n; slot < 64n; slot++) {
    const key = keccak256(encodeAbiParameters([{ type: "uint256" }, { type: "uint256" }], [nullifier, slot]));
    if (BigInt(await rpc<Hex>(stack.rpcUrl, "eth_getStorageAt", [stack.manifest.poolAddress, key, "latest"])) !== 0n) return key;
  }
  throw new Error("no storage slot holds the nullifier");
}

describe("replaying an operation that reverted on chain", () => {
  let reverted: { op: Operation; nullifier: bigint; spentAt: number };

  it("before any change: refused as nullifier_spent, the traces identical, exit 1 from the CLI; at the block before it, it would have gone through", async () => {
    reverted = await revertedByARace();
    const { op, nullifier } = reverted;
    expect(op).toMatchObject({ state: "reverted", reason: { revert: { name: "NullifierSpent" } } });
    const spent = `NullifierSpent(${nullifier})`;

    const answer = await stack.replay(op.id);
    expect(answer.verdict).toEqual({ expected: "accepted", matched: false, exitCode: 1 });
    expect(answer.before).toMatchObject({ state: "reverted", error: spent, trace: { source: "transaction", transactionHash: op.transactionHash, block: op.block?.number, error: spent } });
    expect(answer.after).toMatchObject({ state: "rejected", admitted: false, refusal: { code: "nullifier_spent" }, simulation: { ok: false, reason: { revert: { name: "NullifierSpent" } } }, error: spent, trace: { source: "call" }, sent: null });
    expect(answer.block.head).toBe(true);
    expect(answer.diff).toMatchObject({ identical: true, first: null, changes: [] });

    expect((await stack.replay(op.id, { expect: "rejected" })).verdict).toEqual({ expected: "rejected", matched: true, exitCode: 0 });

    // From the CLI, side by side (reads only): at the head, and on the block before the race, when the note was not spent yet.
    const [cli, earlier] = await Promise.all([replayCli(op.id), replayCli(op.id, "--at", String(reverted.spentAt - 1), "--json")]);
    expect(cli.exitCode, cli.stderr).toBe(1);
    expect(cli.stdout).toContain("traces: identical (gas aside)");
    expect(cli.stdout).toContain("verdict: rejected, expected accepted: not as expected (exit 1)");
    expect(earlier.exitCode, earlier.stderr).toBe(0);
    const atEarlier = JSON.parse(earlier.stdout) as ReplayAnswer;
    expect(atEarlier).toMatchObject({ block: { number: reverted.spentAt - 1, head: false }, after: { state: "accepted", admitted: true } });
    expect(atEarlier.diff?.first?.path).toEqual(["Pool.transact", "DevVerifier.verifyProof"]);
  });

  it("after the nullifier's slot is cleared (anvil_setStorageAt): exit 0, and the first difference is the verifier call only the replay makes", async () => {
    const { op, nullifier } = reverted;
    await rpc(stack.rpcUrl, "anvil_setStorageAt", [stack.manifest.poolAddress, await nullifierKey(nullifier), `0x${"0".repeat(64)}`]);

    const served = await devPost(`operations/${op.id}/replay`, {});
    expect(served.status).toBe(200);
    const answer = served.body as unknown as ReplayAnswer;
    expect(answer.verdict).toEqual({ expected: "accepted", matched: true, exitCode: 0 });
    expect(answer.after).toMatchObject({ state: "accepted", admitted: true, refusal: null, simulation: { ok: true, reason: null }, error: null });
    // The original still reverted: its transaction is traced on the state it was mined on.
    expect(answer.before.trace?.error).toBe(`NullifierSpent(${nullifier})`);
    expect(answer.diff?.identical).toBe(false);
    expect(answer.diff?.first).toMatchObject({ change: "added", path: ["Pool.transact", "DevVerifier.verifyProof"], before: null, after: { function: "verifyProof", returned: "true", error: null } });
    // Then the rest: the root reverts no more, and the note's value moves (the relayer's fee among it).
    expect(answer.diff?.changes.at(-1)).toMatchObject({ change: "changed", path: ["Pool.transact"], fields: ["error"], before: { error: `NullifierSpent(${nullifier})` }, after: { error: null } });
    expect(answer.diff?.changes.some((c) => c.change === "added" && c.after?.function === "transfer")).toBe(true);

    const cli = await replayCli(op.id);
    expect(cli.exitCode, cli.stderr).toBe(0);
    expect(cli.stdout).toContain("first difference: Pool.transact > DevVerifier.verifyProof: called by the replay only");
    expect(cli.stdout).toMatch(/^\+ {3}DevVerifier\.verifyProof\(.*-> true$/m);
    expect(cli.stdout).toMatch(/^- Pool\.transact\(.*<- reverted: NullifierSpent/m);
    expect((await stack.replay(op.id, { expect: "rejected" })).verdict.exitCode).toBe(1);
  });

  it("--send relays it as a new operation linked to the original, which confirms; replayed again, it is spent by that replay", async () => {
    const { op } = reverted;
    const answer = await stack.replay(op.id, { send: true });
    expect(answer.verdict).toEqual({ expected: "confirmed", matched: true, exitCode: 0 });
    const sent = answer.after.sent;
    expect(sent).toMatchObject({ id: expect.stringMatching(/^op_/), replayOf: op.id, state: "confirmed", reason: null, transactionHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(answer.after.trace).toMatchObject({ source: "transaction", transactionHash: sent?.transactionHash, error: null });
    expect((await queue.status("send", sent?.id as string)).state).toBe("confirmed");
    const links = async (id: string) => (await (await fetch(`${stack.queueUrl}/api/dev/operations/${id}/replays`)).json()) as Record<string, unknown>;
    expect(await links(sent?.id as string)).toEqual({ operation: sent?.id, replayOf: op.id, replays: [] });
    expect(await links(op.id)).toEqual({ operation: op.id, replayOf: null, replays: [sent?.id] });

    const again = await stack.replay(op.id);
    expect(again.verdict.exitCode).toBe(1);
    expect(again.after.refusal).toMatchObject({ code: "nullifier_spent", detail: expect.stringContaining(sent?.id as string) });
  });
});

describe("replaying an operation rejected before broadcast", () => {
  it("its original call is traced at the block it was judged; with the verifier put back, the first difference is the verifier's answer, and --send from the CLI confirms", async () => {
    const verifier = stack.manifest.queue.proof.verifier.address;
    const code = await rpc<Hex>(stack.rpcUrl, "eth_getCode", [verifier, "latest"]);
    const { config, transaction } = await provenSend(stack, pool, queue, 3);
    expect((await devPost("relayer", { engine: "paused" })).status).toBe(200);
    const accepted = await queue.submit("send", config, transaction);
    // While it waits, the verifier answers false to every proof (as revert-next's does for one relay); a block is mined on it.
    await rpc(stack.rpcUrl, "anvil_setCode", [verifier, "0x600060005260206000f3"]);
    await rpc(stack.rpcUrl, "anvil_mine", ["0x1"]);
    const judgedAt = Number(await rpc<Hex>(stack.rpcUrl, "eth_blockNumber"));
    expect((await devPost("relayer", { engine: "running" })).status).toBe(200);
    const rejected = await until(accepted.id, (o) => o.terminal);
    expect(rejected).toMatchObject({ state: "rejected", reason: { code: "simulation_failed", revert: { name: "InvalidProof" } } });
    // A later block (in a later second): the judged block's state is kept as it was, whatever is changed at the head.
    await new Promise((r) => setTimeout(r, 1_100));
    await rpc(stack.rpcUrl, "anvil_mine", ["0x1"]);

    const unchanged = await stack.replay(accepted.id);
    expect(unchanged.verdict.exitCode).toBe(1);
    expect(unchanged.before).toMatchObject({ state: "rejected", error: "InvalidProof()", trace: { source: "call", block: judgedAt, transactionHash: null } });
    expect(unchanged.after).toMatchObject({ state: "rejected", refusal: { code: "invalid_proof" } });
    expect(unchanged.diff?.identical).toBe(true);

    await rpc(stack.rpcUrl, "anvil_setCode", [verifier, code]);
    const fixed = await stack.replay(accepted.id);
    expect(fixed.verdict.exitCode).toBe(0);
    expect(fixed.diff?.first).toMatchObject({ change: "changed", path: ["Pool.transact", "DevVerifier.verifyProof"], fields: ["output"], before: { returned: "false" }, after: { returned: "true" } });
    expect(fixed.text).toContain("first difference: Pool.transact > DevVerifier.verifyProof: returned false -> true");

    const sent = await replayCli(accepted.id, "--send");
    expect(sent.exitCode, sent.stderr).toBe(0);
    const line = /^sent: {3}(op_[0-9a-f]+), a replay of (op_[0-9a-f]+): confirmed, transaction 0x[0-9a-f]{64}$/m.exec(sent.stdout);
    expect(line?.[2]).toBe(accepted.id);
    expect((await queue.status("send", line?.[1] as string)).state).toBe("confirmed");
  });
});

describe("replays that cannot be judged (exit 125)", () => {
  it("an unknown operation is a 404 problem, stack.replay rejects with its code, and the CLI exits 125", async () => {
    const served = await devPost("operations/op_nope/replay", {});
    expect(served).toMatchObject({ status: 404, type: expect.stringContaining("application/problem+json"), body: { code: "operation_not_found", status: 404 } });
    await expect(stack.replay("op_nope")).rejects.toMatchObject({ code: "operation_not_found" });
    const cli = await replayCli("op_nope");
    expect(cli.exitCode).toBe(125);
    expect(cli.stderr).toContain("404 operation_not_found: no operation op_nope");
    expect((await fetch(`${stack.queueUrl}/api/dev/operations/op_nope/replays`)).status).toBe(404);
  });

  it("bad input is a 400 problem, a block not mined yet a 404, an operation still in flight a 409; from the CLI, a refusal, a mistake and no stack exit 125", async () => {
    const [op] = stack.diagnostics().operations.filter((o) => o.state === "reverted");
    const id = op?.id as string;
    expect((await devPost(`operations/${id}/replay`, { at: -1 })).body).toMatchObject({ status: 400, code: "invalid_request" });
    expect((await devPost(`operations/${id}/replay`, { sent: true })).body).toMatchObject({ status: 400, code: "invalid_request" });
    // Without send, a replay ends at the admission: "confirmed" can never be met.
    expect((await devPost(`operations/${id}/replay`, { expect: "confirmed" })).body).toMatchObject({ status: 400, code: "invalid_request" });
    const future = await devPost(`operations/${id}/replay`, { at: 1_000_000 });
    expect(future.body).toMatchObject({ status: 404, code: "block_not_found" });
    // From the CLI, side by side: a refusal of the route, a mistake in the call (bisect skips rather than calls a commit bad), no stack.
    const runs = await Promise.all([[id, "--expect", "confirmed"], [id, "--at", "x"], [id, "--state-dir", await tempDir("replay-none-")]].map((args) => replayCli(...args)));
    expect(runs.map((run) => run.exitCode)).toEqual([125, 125, 125]);
    expect(runs[0]?.stderr).toContain("400 invalid_request");
    expect(runs[1]?.stderr).toContain("--at must be a non-negative integer");
    expect(runs[2]?.stderr).toContain("no running stack");

    // Mining held: an operation waits, submitted, and cannot be replayed until it ends.
    const { config, transaction } = await provenSend(stack, pool, queue, 4);
    expect((await devPost("mining", { mode: "hold" })).status).toBe(200);
    try {
      const live = await queue.submit("send", config, transaction);
      await until(live.id, (o) => o.state === "submitted");
      expect((await devPost(`operations/${live.id}/replay`, {})).body).toMatchObject({ status: 409, code: "operation_live", state: "submitted" });
    } finally {
      await devPost("mining", { mode: "auto" });
    }
  });
});

describe("the dashboard's replay button", () => {
  const executablePath = process.env.CHROMIUM_PATH ?? execFileSync("sh", ["-c", "command -v chromium || true"], { encoding: "utf8" }).trim();
  let browser: Browser | undefined;
  afterAll(() => browser?.close());

  it("replays a relay reverted by 'revert next relay' and shows its verdict and the diff, the verifier's answer first", async () => {
    if (!executablePath) throw new Error("no chromium on PATH: apt-get install chromium, or set CHROMIUM_PATH");
    browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox"] });
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(30_000);
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => void (message.type() === "error" && errors.push(message.text())));

    const { config, transaction } = await provenSend(stack, pool, queue, 6);
    stack.faults.revertNextRelay();
    const op = await queue.waitFor("send", (await queue.submit("send", config, transaction)).id);
    expect(op.state).toBe("reverted");
    await page.goto(`${stack.queueUrl}/api/dev/dashboard`);
    await page.getByText("live", { exact: true }).waitFor();
    const entry = page.locator(`#op-${op.id}[data-state="reverted"]`);
    await entry.locator("summary").click();
    await entry.getByRole("button", { name: "replay" }).click();
    // The verifier was swapped for that one relay only: now the same request would be admitted.
    await page.locator(`#replay-${op.id} .verdict`, { hasText: "replay: accepted, expected accepted (exit 0)" }).waitFor();
    const diff = page.locator(`#replay-${op.id} .replay-diff`);
    expect(await diff.textContent()).toContain("first difference: Pool.transact > DevVerifier.verifyProof: returned false -> true");
    expect(await diff.locator(".removed", { hasText: "verifyProof" }).textContent()).toMatch(/^- {3}DevVerifier\.verifyProof\(.*-> false$/);
    expect(await diff.locator(".added", { hasText: "verifyProof" }).textContent()).toMatch(/^\+ {3}DevVerifier\.verifyProof\(.*-> true$/);
    expect(errors).toEqual([]);
  });

  it("offers replay only on ended operations, and escapes what the answer quotes", async () => {
    const record = (state: OperationRecord["state"]) =>
      ({ id: "op_1", kind: "send", state, request: {}, nullifiers: [], history: [{ state, at: "2026-11-25T00:00:00.000Z" }], attempts: [], reason: null, minedHash: null, block: null, createdAt: "2026-11-25T00:00:00.000Z", updatedAt: "2026-11-25T00:00:00.000Z", idempotencyKey: null, requestHash: "h" }) as unknown as OperationRecord;
    expect(operationHtml(record("reverted"), "/api/dev", 1)).toContain(`hx-get="/api/dev/dashboard/replay?id=op_1"`);
    expect(operationHtml(record("submitted"), "/api/dev", 1)).not.toContain("dashboard/replay");
    const hostile = "<img src=x onerror=alert(1)>\u009b2J";
    const call = (error: string | null, calls: TracedCall[] = []): TracedCall => ({ type: "CALL", from: "0x01", to: "0x02", contract: hostile, function: "f", gasUsed: 1, error, input: "0x", output: null, args: [hostile], returned: null, calls }) as TracedCall;
    const diff = diffTraces(call(hostile), call(null, [call(null)]));
    const html = dashboardReplayHtml({ text: `${diff.text}\n+ ${hostile}`, after: { state: "accepted" }, verdict: { expected: "accepted", exitCode: 0 } } as ReplayAnswer);
    expect(html).not.toContain("<img");
    expect(html).toContain("&#60;img src=x onerror=alert(1)&#62;");
    expect(dashboardReplayHtml(Object.assign(new Error(hostile), { code: "not_replayable" }))).not.toContain("<img");
    // A C1 control (CSI) from the chain is shown escaped; the HTML escaping is the page's (esc), checked above it.
    expect(diff.text).not.toMatch(/[\u0080-\u009f]/);
    expect(diff.text).toContain("\\x9b2J");
  });
});

describe("the trace diff", () => {
  const frame = (contract: string, fn: string, extra: Partial<TracedCall> = {}, calls: TracedCall[] = []): TracedCall =>
    ({ type: "CALL", from: "0x01", to: "0x02", contract, function: fn, gasUsed: 100, error: null, input: `0x${fn}`, output: null, args: [], returned: null, calls, ...extra }) as TracedCall;

  it("walks in execution order: a call inserted among others is one addition, a return that changed shows where it happened, before the root's revert", () => {
    const before = frame("Pool", "transact", { error: "InvalidProof()" }, [frame("Token", "a"), frame("Verifier", "verify", { output: "0x00", returned: "false" })]);
    const after = frame("Pool", "transact", {}, [frame("Token", "a"), frame("Hasher", "hash"), frame("Verifier", "verify", { output: "0x01", returned: "true" }), frame("Token", "transfer")]);
    const diff = diffTraces(before, after);
    expect(diff.changes.map((c) => [c.change, c.path.join(" > "), c.fields.join(",")])).toEqual([
      ["added", "Pool.transact > Hasher.hash", ""],
      ["changed", "Pool.transact > Verifier.verify", "output"],
      ["added", "Pool.transact > Token.transfer", ""],
      ["changed", "Pool.transact", "error"],
    ]);
    expect(diff.first).toBe(diff.changes[0]);
    expect(diff.text.split("\n")).toEqual([
      "- Pool.transact()  [100 gas]  <- reverted: InvalidProof()",
      "+ Pool.transact()  [100 gas]",
      "    Token.a()  [100 gas]",
      "+   Hasher.hash()  [100 gas]",
      "-   Verifier.verify()  [100 gas]  -> false",
      "+   Verifier.verify()  [100 gas]  -> true",
      "+   Token.transfer()  [100 gas]",
    ]);
    expect(diffTraces(before, before)).toMatchObject({ identical: true, first: null, changes: [] });
  });

  it("shows a run of the same call on one side as one line and a count", () => {
    const leaf = () => frame("Hasher", "hash");
    const diff = diffTraces(frame("Pool", "transact"), frame("Pool", "transact", {}, [leaf(), leaf(), leaf()]));
    expect(diff.changes).toHaveLength(3);
    expect(diff.text.split("\n").slice(1)).toEqual(["+   Hasher.hash()  [100 gas]", "+   … and 2 more calls of Hasher.hash"]);
  });
});

describe("a replay and a reset at once", () => {
  it("are taken one after the other: the replay before the reset answers, the one after it finds no operation (the store went back with the chain)", async () => {
    const [op] = stack.diagnostics().operations.filter((o) => o.state === "reverted");
    const id = op?.id as string;
    const [before, reset, after] = await Promise.allSettled([stack.replay(id), stack.reset(), stack.replay(id)]);
    expect(before).toMatchObject({ status: "fulfilled", value: { operation: id } });
    expect(reset.status).toBe("fulfilled");
    expect(after).toMatchObject({ status: "rejected", reason: { code: "operation_not_found" } });
  });
});
