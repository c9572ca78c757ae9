import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import type { Address } from "viem";
import { ACTION_ROUTES, type DevStack } from "../harness/index.ts";
import { createAccountKeys, prepareAction, type QueueClient } from "../harness/client/index.ts";
import { poolFixture } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { freePort } from "./support/ports.ts";
import { hex, rpc } from "./support/rpc.ts";

// Traces of relayed operations: the call tree with contract and function names, the custom error decoded.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let queue: QueueClient;

// Actions must settle within 60 s of their quote: long enough to deposit, prove and be mined on a busy
// machine (15 s was not, with two test files at once), short enough to lapse when the clock is moved on.
withQueueStack({ runtime: { quotes: { settleWithinSeconds: 60 } } }, (s) => ({ stack, pool, queue } = s));

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
    const cli = (...args: string[]) => execa(process.execPath, ["--experimental-strip-types", "--no-warnings", "scripts/dev-stack.ts", "trace", ...args], { reject: false });
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
