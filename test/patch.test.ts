import { cp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { execa } from "execa";
import { keccak256, type Address } from "viem";
import { afterAll, describe, expect, it } from "vitest";
import { PatchError, type DevStack } from "../harness/index.ts";
import { closeProvers, createQueueClient, reviewedFrom } from "../harness/client/index.ts";
import { StackInfo } from "../harness/state-dir/index.ts";
import { createChainClient } from "../src/chain/client.ts";
import { poolFixture, provenSend } from "./support/pool.ts";
import { withStacks } from "./support/stacks.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

// Issue 33, item 1: a real bug (PoolFeeOffByOne: a send that pays a fee reverts FeeTooHigh), patched into
// a stack, reproduced, saved, and fixed by patching the Pool's own source back; every refusal leaves the
// chain's code as it was.
const tempDir = withTempDirs();
const startStack = withStacks();
afterAll(() => closeProvers());

const CONTRACTS = path.resolve("contracts-fixtures/contracts");
const BUGGY = path.join(CONTRACTS, "test", "PoolFeeOffByOne.sol");
const FIXED = path.join(CONTRACTS, "Pool.sol");
const CLI = ["--experimental-strip-types", "--no-warnings", "scripts/dev-stack.ts"];

const codeHash = async (stack: DevStack, address: string) => keccak256((await createChainClient(stack.rpcUrl).getCode({ address: address as Address })) ?? "0x");

/** A copy of the fixtures' sources with one edit to the Pool: a variant a developer might try. */
async function poolVariant(edit: (source: string) => string): Promise<string> {
  const dir = await tempDir("devstack-patch-variant-");
  await cp(CONTRACTS, dir, { recursive: true });
  const file = path.join(dir, "Pool.sol");
  const source = await readFile(file, "utf8");
  const edited = edit(source);
  expect(edited).not.toBe(source);
  await writeFile(file, edited);
  return file;
}

/** A fee-paying private send through the queue: what the buggy Pool refuses. */
async function send(stack: DevStack, from: number): Promise<{ state: string; detail: string }> {
  const pool = await poolFixture(stack);
  const queue = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
  const { config, transaction } = await provenSend(stack, pool, queue, from);
  try {
    const op = await queue.waitFor("send", (await queue.submit("send", config, transaction)).id, { timeoutMs: 30_000 });
    return { state: op.state, detail: JSON.stringify(op) };
  } catch (error) {
    return { state: "refused", detail: String((error as Error).message) };
  }
}

async function refusal(work: Promise<unknown>): Promise<PatchError> {
  const error = await work.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(PatchError);
  return error as PatchError;
}

describe("patching a deployed contract in place", () => {
  let stack: DevStack;
  let bundle: string;

  it("--patch at start puts the buggy Pool in place, said loudly, and its relay reverts; a bundle records it", async () => {
    const stateDir = await tempDir("devstack-patch-");
    stack = await startStack({ stateDir, patch: [`Pool=${BUGGY}`] });
    const [patched] = stack.patches();
    expect(patched).toMatchObject({ name: "Pool", address: stack.manifest.poolAddress, source: `${BUGGY}:PoolFeeOffByOne` });
    // The manifest's code hash follows the chain, and the runtime serves it.
    expect(await codeHash(stack, stack.manifest.poolAddress)).toBe(patched?.codeHash);
    expect(stack.manifest.poolRuntimeCodeHash).toBe(patched?.codeHash);
    const served = (await (await fetch(`${stack.queueUrl}/api/queue/config`)).json()) as { poolRuntimeCodeHash: string };
    expect(served.poolRuntimeCodeHash).toBe(patched?.codeHash);
    const health = (await (await fetch(`${stack.queueUrl}/api/queue/health`)).json()) as { checks: { patched?: unknown } };
    expect(health.checks.patched).toEqual([patched]);
    expect(StackInfo.parse(JSON.parse(await readFile(stack.stackInfoPath, "utf8"))).patches).toEqual([patched]);

    const sent = await send(stack, 2);
    expect(sent.state).not.toBe("confirmed");
    expect(sent.detail).toContain("FeeTooHigh");

    bundle = path.join(stateDir, "buggy.qdbundle");
    await stack.save(bundle);
  });

  it("refuses a patch that moves a storage variable, naming it, the chain's code unchanged", async () => {
    const before = await codeHash(stack, stack.manifest.poolAddress);
    const moved = await poolVariant((s) => s.replace("    address[] private _assets;", "    uint256 private addedBefore;\n    address[] private _assets;"));
    const error = await refusal(stack.patch("Pool", moved));
    expect(error.code).toBe("storage_layout_changed");
    expect(error.message).toContain("storage variable _assets moved from slot 5 to slot 6");
    expect(await codeHash(stack, stack.manifest.poolAddress)).toBe(before);
    expect(stack.manifest.poolRuntimeCodeHash).toBe(before);
  });

  it("refuses a patch that changes an immutable, naming it", async () => {
    const before = await codeHash(stack, stack.manifest.poolAddress);
    const constant = await poolVariant((s) => s.replace("address public immutable owner;", "address public constant owner = address(0xdead);").replace("        owner = msg.sender;\n", ""));
    const error = await refusal(stack.patch("Pool", constant));
    expect(error.code).toBe("immutable_changed");
    expect(error.message).toMatch(/^immutable owner is dropped/);
    expect(await codeHash(stack, stack.manifest.poolAddress)).toBe(before);
  });

  it("refuses an unknown contract and a compile error in one line, over HTTP as problems and from the CLI", async () => {
    const post = (body: unknown) => fetch(`${stack.queueUrl}/api/dev/patch`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const unknown = await post({ contract: "Treasury", source: FIXED });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toContain("application/problem+json");
    expect(await unknown.json()).toMatchObject({ code: "unknown_contract", detail: expect.stringContaining("no contract Treasury in this stack") });

    const broken = await poolVariant((s) => s.replace("address[] private _assets;", "address[] private _assets"));
    const answer = await post({ contract: "Pool", source: broken });
    expect(answer.status).toBe(422);
    expect(await answer.json()).toMatchObject({ code: "compile_failed", detail: expect.stringContaining("ParserError") });

    const cli = await execa(process.execPath, [...CLI, "patch", "Pool", broken, "--state-dir", stack.stateDir], { reject: false });
    expect(cli.exitCode).toBe(1);
    expect(cli.stderr.trim().split("\n")).toHaveLength(1);
    expect(cli.stderr).toMatch(/^queue-devstack patch: compile_failed: .*ParserError/);
  });

  it("a patch and a reset asked together are serialized; the fix stays (a patch is part of the baseline) and the relay confirms", async () => {
    const [fixed] = await Promise.all([stack.patch("Pool", FIXED), stack.reset()]);
    // The Pool's own source gives back the deployed code: the genesis's.
    expect(await codeHash(stack, stack.manifest.poolAddress)).toBe(fixed.codeHash);
    await stack.reset();
    expect(await codeHash(stack, stack.manifest.poolAddress)).toBe(fixed.codeHash);
    expect(stack.patches()).toEqual([expect.objectContaining({ name: "Pool", codeHash: fixed.codeHash })]);
    expect((await send(stack, 3)).state).toBe("confirmed");
  });

  it("a loaded bundle keeps the patch; the CLI's patch fixes it and unpatch undoes it", async () => {
    const loaded = await startStack({ load: bundle, stateDir: await tempDir("devstack-patch-loaded-") });
    const [buggy] = loaded.patches();
    expect(buggy).toMatchObject({ name: "Pool", source: `${BUGGY}:PoolFeeOffByOne` });
    expect(await codeHash(loaded, loaded.manifest.poolAddress)).toBe(buggy?.codeHash);

    const cli = await execa(process.execPath, [...CLI, "patch", "Pool", FIXED, "--state-dir", loaded.stateDir], { reject: false });
    expect(cli.exitCode, cli.stderr).toBe(0);
    expect(cli.stdout).toContain("patched Pool");
    const [fixed] = loaded.patches();
    expect(await codeHash(loaded, loaded.manifest.poolAddress)).toBe(fixed?.codeHash);

    const undone = await loaded.unpatch("Pool");
    expect(loaded.patches()).toEqual([]);
    expect(await codeHash(loaded, loaded.manifest.poolAddress)).toBe(undone.codeHash);
  });
});
