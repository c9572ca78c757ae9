import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import type { Address } from "viem";
import { ACTION_ROUTES, traceOf, type DevStack } from "../harness/index.ts";
import { loadFixtures } from "../harness/deployment/index.ts";
import { diffTraces } from "../harness/replay/index.ts";
import { createAccountKeys, prepareAction, type QueueClient } from "../harness/client/index.ts";
import { poolFixture } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { freePort } from "./support/ports.ts";
import { hex, rpc } from "./support/rpc.ts";
import { builtCli } from "./support/cli.ts";

// Traces of relayed operations: the call tree with contract and function names, the custom error decoded.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let queue: QueueClient;

// Actions must settle within 60 s of their quote: long enough to deposit, prove and be mined on a busy
// machine (15 s was not, with two test files at once), short enough to lapse when the clock is moved on.
withQueueStack({ options: { runtime: { quotes: { settleWithinSeconds: 60 } } } }, (s) => ({ stack, pool, queue } = s));

async function action() {
  const keys = createAccountKeys();
  const config = await queue.beforePrepare();
  const weth = config.assets.find((a) => a.decimals === 18)?.address as Address;
  const quote = await queue.quote(config, { route: ACTION_ROUTES.swap, assetIn: pool.asset, assetOut: weth, amountIn: pool.usdc("30") });
  const { state, input } = await pool.fundedNote(2, keys, pool.usdc("31"));
  return { config, prepared: await prepareAction({ config, quote, prover: pool.prover, tree: state.tree, keys, inputs: [input] }) };
}

describe("stack.trace(operationId)", () => {
  it("a relay reverted on chain: the Pool's custom error, decoded, at the call that raised it", async () => {
    const { config, prepared } = await action();
    await rpc(stack.rpcUrl, "evm_setAutomine", [false]);
    const op = await queue.submitAction(config, prepared);
    for (let i = 0; i < 50 && (await queue.status("withdraw", op.id)).state !== "submitted"; i++) await new Promise((r) => setTimeout(r, 100));
    // Mined only after the action's deadline.
    await rpc(stack.rpcUrl, "evm_increaseTime", [hex(120)]);
    await rpc(stack.rpcUrl, "evm_mine", []);
    await rpc(stack.rpcUrl, "evm_setAutomine", [true]);
    const done = await queue.waitFor("withdraw", op.id);
    expect(done.state).toBe("reverted");
    const trace = await stack.trace(op.id);
    expect(trace.transactionHash).toBe(done.transactionHash);
    expect(trace.root).toMatchObject({ contract: "Pool", function: "transactAction" });
    expect(trace.error).toMatch(/^ActionExpired\(\d+\)$/);
    expect(trace.text.split("\n")[0]).toMatch(/^Pool\.transactAction {2}\[\d+ gas\] {2}<- reverted: ActionExpired\(\d+\)$/);

    // The same from the CLI, for the stack running from that state dir.
    const cli = (...args: string[]) => execa(process.execPath, [...builtCli(), "trace", ...args], { reject: false });
    const printed = await cli(op.id, "--state-dir", stack.stateDir);
    expect(printed.exitCode).toBe(0);
    expect(printed.stdout).toContain(`operation ${op.id} (reverted), transaction ${done.transactionHash}`);
    expect(printed.stdout).toMatch(/Pool\.transactAction {2}\[\d+ gas\] {2}<- reverted: ActionExpired\(\d+\)/);
    expect((await cli("--state-dir", stack.stateDir)).exitCode).toBe(2);
    expect((await cli("op_nope", "--state-dir", stack.stateDir)).stderr).toContain("has no operation op_nope");
    // A stack that cannot answer (gone since: stack.json's queue URL names a port nothing listens on): one line, exit 1.
    const gone = await mkdtemp(path.join(tmpdir(), "trace-gone-"));
    try {
      const info = JSON.parse(await readFile(path.join(stack.stateDir, "stack.json"), "utf8"));
      await writeFile(path.join(gone, "stack.json"), JSON.stringify({ ...info, queueUrl: `http://127.0.0.1:${await freePort()}` }));
      const refused = await cli(op.id, "--state-dir", gone);
      expect(refused.exitCode).toBe(1);
      expect(refused.stderr.trim().split("\n")).toHaveLength(1);
      expect(refused.stderr).toMatch(/^queue-devstack trace: the stack at http:\/\/127\.0\.0\.1:\d+ did not answer/);
    } finally {
      await rm(gone, { recursive: true, force: true });
    }
  });

  it("a confirmed action: every call named, down to the verifier and the swap adapter", async () => {
    const { config, prepared } = await action();
    const done = await queue.waitFor("withdraw", (await queue.submitAction(config, prepared)).id);
    expect(done.state).toBe("confirmed");
    const trace = await stack.trace(done.id);
    expect(trace.error).toBeNull();
    const verifier = stack.manifest.queue.proof.system === "dev" ? "DevVerifier" : "JoinSplitVerifier";
    for (const line of ["Pool.transactAction", `${verifier}.verifyProof`, "Pool.runAdapter", "SwapAdapter (route swap).execute", "dUSDC.transferFrom", "dUSDC.transfer"]) {
      expect(trace.text).toContain(line);
    }
  });
});

describe("precompiles in traces and trace diffs", () => {
  /** Runtime code that staticcalls each precompile given with no input and 100,000 gas, in order, then stops. */
  const caller = (...precompiles: number[]) => `0x${precompiles.map((p) => `600060006000600060${p.toString(16).padStart(2, "0")}620186a0fa50`).join("")}00` as const;
  const scratch = (n: number) => `0x${"5c".repeat(19)}${n.toString(16).padStart(2, "0")}` as Address;
  const traceCode = async (n: number, code: string) => {
    await rpc(stack.rpcUrl, "anvil_setCode", [scratch(n), code]);
    return traceOf({ rpcUrl: stack.rpcUrl, config: stack.manifest, fixtures: await loadFixtures(), call: { from: stack.accounts[0]?.address as Address, to: scratch(n), data: "0x" } });
  };

  it("names each precompile by its address and EIP name (ecAdd 0x06, ecMul 0x07, ecPairing 0x08, modexp 0x05…), in a trace and in a diff", async () => {
    const all = Array.from({ length: 0x11 }, (_, i) => i + 1);
    const trace = await traceCode(1, caller(...all));
    expect(trace.root.calls.map((c) => `${c.contract}.${c.function}`)).toEqual([
      "precompile 0x01.ecRecover", "precompile 0x02.sha256", "precompile 0x03.ripemd160", "precompile 0x04.identity", "precompile 0x05.modexp",
      "precompile 0x06.ecAdd", "precompile 0x07.ecMul", "precompile 0x08.ecPairing", "precompile 0x09.blake2f", "precompile 0x0a.pointEvaluation",
      "precompile 0x0b.bls12G1Add", "precompile 0x0c.bls12G1MSM", "precompile 0x0d.bls12G2Add", "precompile 0x0e.bls12G2MSM", "precompile 0x0f.bls12PairingCheck", "precompile 0x10.bls12MapFpToG1", "precompile 0x11.bls12MapFp2ToG2",
    ]);
    expect(trace.root.calls.every((c) => c.args === null && c.returned === null)).toBe(true); // raw bytes, never decoded as an ABI call
    expect(trace.root.calls.filter((c) => c.gasUsed === 0).map((c) => c.contract)).toEqual([]); // each one a precompile on this chain (an empty account's call costs nothing)
    // A verifier's ecMul run, as a replay's diff shows it: named, and the run one line and a count.
    const diff = diffTraces((await traceCode(2, caller(6, 8))).root, (await traceCode(3, caller(6, 7, 7, 7, 8))).root);
    const lines = diff.text.split("\n").slice(1);
    expect(lines[0]).toMatch(/^ {4}precompile 0x06\.ecAdd\(\) {2}\[/);
    expect(lines[1]).toMatch(/^\+ {3}precompile 0x07\.ecMul\(\) {2}\[/);
    expect(lines[2]).toBe("+   … and 2 more calls of precompile 0x07.ecMul");
    expect(lines[3]).toMatch(/^ {4}precompile 0x08\.ecPairing\(\) {2}\[/);
    expect(diff.text).not.toMatch(/0x0{30}/);
    for (const n of [1, 2, 3]) await rpc(stack.rpcUrl, "anvil_setCode", [scratch(n), "0x"]);
  });
});
