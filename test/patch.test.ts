import { cp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { execa } from "execa";
import { keccak256, type Address } from "viem";
import { afterAll, describe, expect, it } from "vitest";
import { PatchError, type DevStack } from "../harness/index.ts";
import { closeProvers, createQueueClient, reviewedFrom } from "../harness/client/index.ts";
import { StackInfo } from "../harness/stack-info/index.ts";
import { createChainClient } from "../src/chain/client.ts";
import { buildQueueRuntime, codeChanges } from "../src/server.ts";
import { CIRCUIT_BUILD_DIR, manifestBytes } from "../harness/deployment/index.ts";
import { mnemonicToAccount } from "viem/accounts";
import { VARIANTS_PATH, variantsHash } from "./support/patch-variants.ts";
import { poolFixture, provenSend } from "./support/pool.ts";
import { withStacks } from "./support/stacks.ts";
import { withTempDirs } from "./support/temp-dirs.ts";
import { builtCli } from "./support/cli.ts";

// Issue 33, item 1: a real bug (PoolFeeOffByOne: a send that pays a fee reverts FeeTooHigh), patched into
// a stack, reproduced, saved, and fixed by patching the Pool's own source back; every refusal leaves the
// chain's code as it was.
const tempDir = withTempDirs();
const startStack = withStacks();
afterAll(() => closeProvers());

const CONTRACTS = path.resolve("contracts-fixtures/contracts");
const BUGGY = path.join(CONTRACTS, "test", "PoolFeeOffByOne.sol");
const FIXED = path.join(CONTRACTS, "Pool.sol");
/**
 * A variant compiled once by `npm run build:contracts` (test/support/patch-variants.ts). The .sol path
 * (compiled here, with the npm solc) is tested by --patch BUGGY at start, the CLI's patch with FIXED and
 * the compile errors; each is compiled once in this file (the compile cache keeps it afterwards).
 */
const variant = (contract: string) => `${VARIANTS_PATH}:${contract}`;
/** The fixed Pool: Pool.sol as compiled into the variants' output. */
const POOL = variant("PoolFixed");
const CLI = builtCli();

const codeHash = async (stack: DevStack, address: string) => keccak256((await createChainClient(stack.rpcUrl).getCode({ address: address as Address })) ?? "0x");

/** A copy of the fixtures' sources with one edit to a file (the Pool's by default): a variant a developer might try. */
async function poolVariant(edit: (source: string) => string, name = "Pool.sol"): Promise<string> {
  const dir = await tempDir("devstack-patch-variant-");
  await cp(CONTRACTS, dir, { recursive: true });
  const file = path.join(dir, name);
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

it("the committed patch variants are current (npm run build:contracts)", async () => {
  const { sourcesHash } = JSON.parse(await readFile(VARIANTS_PATH, "utf8")) as { sourcesHash: string };
  expect(sourcesHash, "test/fixtures/patch-variants.json is stale: run npm run build:contracts").toBe(await variantsHash());
});

describe("patching a deployed contract in place", () => {
  let stack: DevStack;
  let bundle: string;
  /** A send the relayer accepted on the fixed Pool, and that failed once the buggy one was patched in before it signed. */
  let failed: string;

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

    // The admission's simulation meets the bug: refused, FeeTooHigh(fee, 0).
    const sent = await send(stack, 2);
    expect(sent.state).toBe("refused");
    expect(sent.detail).toContain("FeeTooHigh");

    // A stored operation that fails: accepted on the fixed Pool, the relayer paused, the bug patched in
    // before it signs (the relayer checks again then).
    await stack.patch("Pool", POOL);
    const relayer = (engine: "paused" | "running") => fetch(`${stack.queueUrl}/api/dev/relayer`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ engine }) });
    expect((await relayer("paused")).status).toBe(200);
    const pool = await poolFixture(stack);
    const queue = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
    const { config, transaction } = await provenSend(stack, pool, queue, 4);
    failed = (await queue.submit("send", config, transaction)).id;
    await stack.patch("Pool", BUGGY);
    expect((await relayer("running")).status).toBe(200);
    const ended = await queue.waitFor("send", failed, { timeoutMs: 30_000 });
    expect(ended.state).not.toBe("confirmed");
    expect(JSON.stringify(ended)).toContain("FeeTooHigh");

    bundle = path.join(stateDir, "buggy.qdbundle");
    await stack.save(bundle);
  });

  it("refuses a patch that moves a storage variable, naming it, the chain's code unchanged", async () => {
    const before = await codeHash(stack, stack.manifest.poolAddress);
    const error = await refusal(stack.patch("Pool", variant("PoolMovedStorage")));
    expect(error.code).toBe("storage_layout_changed");
    expect(error.message).toContain("storage variable _assets moved from slot 5 to slot 6");
    expect(await codeHash(stack, stack.manifest.poolAddress)).toBe(before);
    expect(stack.manifest.poolRuntimeCodeHash).toBe(before);
  });

  it("refuses a patch that changes an immutable, naming it", async () => {
    const before = await codeHash(stack, stack.manifest.poolAddress);
    const error = await refusal(stack.patch("Pool", variant("PoolDroppedImmutable")));
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

    // A compile's output is kept while the files it read are unchanged: the Pool mended and a file it imports
    // broken instead, the same path is compiled again, and the CLI names the new error.
    await writeFile(broken, await readFile(FIXED, "utf8"));
    const imported = path.join(path.dirname(broken), "AccountRegistry.sol");
    await writeFile(imported, (await readFile(imported, "utf8")).replace("mapping(address => Account) private _accounts;", "mapping(address => Account) private _accounts"));
    const cli = await execa(process.execPath, [...CLI, "patch", "Pool", broken, "--state-dir", stack.stateDir], { reject: false });
    expect(cli.exitCode).toBe(1);
    expect(cli.stderr.trim().split("\n")).toHaveLength(1);
    expect(cli.stderr).toMatch(/^queue-devstack patch: compile_failed: .*ParserError/);
    // The file is named by its path from its project's root: this copy has none, so from the filesystem's.
    expect(cli.stderr).toMatch(new RegExp(`compile_failed: ${path.dirname(broken)}/AccountRegistry\\.sol:\\d+:\\d+: ParserError`));
  });

  it("a patch and a reset asked together are serialized; the fix stays (a patch is part of the baseline) and the relay confirms", async () => {
    const [fixed] = await Promise.all([stack.patch("Pool", POOL), stack.reset()]);
    // The Pool's own source gives back the deployed code: the genesis's.
    expect(await codeHash(stack, stack.manifest.poolAddress)).toBe(fixed.codeHash);
    await stack.reset();
    expect(await codeHash(stack, stack.manifest.poolAddress)).toBe(fixed.codeHash);
    expect(stack.patches()).toEqual([expect.objectContaining({ name: "Pool", codeHash: fixed.codeHash })]);
    expect((await send(stack, 3)).state).toBe("confirmed");
  });

  it("an adapter's patch moves the Pool's pin of its code hash with it (Pool.routes), and the runtime accepts both", async () => {
    const swap = stack.manifest.routes.find((r) => r.action === "external" && r.name === "swap");
    if (swap?.action !== "external") throw new Error("no swap route");
    const patched = await stack.patch("swap", variant("SwapAdapterVersioned"));
    expect(patched).toMatchObject({ name: "swap", address: swap.adapter.address });
    expect(patched.codeHash).not.toBe(patched.previousCodeHash);
    const [, pinned] = (await createChainClient(stack.rpcUrl).readContract({
      address: stack.manifest.poolAddress as Address,
      abi: [{ type: "function", name: "routes", stateMutability: "view", inputs: [{ type: "bytes32" }], outputs: [{ type: "address" }, { type: "bytes32" }, { type: "uint8" }] }] as const,
      functionName: "routes",
      args: [swap.id as `0x${string}`],
    })) as readonly [string, string, number];
    expect(pinned).toBe(patched.codeHash);
    expect(swap.adapter.runtimeCodeHash).toBe(patched.codeHash);
    expect((await fetch(`${stack.queueUrl}/api/queue/health`)).status).toBe(200);
    await stack.reset();
    expect(await codeHash(stack, swap.adapter.address)).toBe(patched.codeHash);
    await stack.unpatch("swap");
    expect(await codeHash(stack, swap.adapter.address)).toBe(patched.previousCodeHash);
  });

  it("allows a patch that appends a storage variable, and checks the next one against the deployed layout, not the patch's", async () => {
    const patched = await stack.patch("Pool", variant("PoolAppended"));
    expect(await codeHash(stack, stack.manifest.poolAddress)).toBe(patched.codeHash);
    await stack.patch("Pool", POOL);
  });

  it("--patch on the command line, on a fork pinning a Pool: the summary and stack.json say patched", async () => {
    const stateDir = await tempDir("devstack-patch-fork-");
    const cli = execa(process.execPath, [...CLI, "--fork-url", stack.rpcUrl, "--pool", stack.manifest.poolAddress, "--fork-cache", await tempDir("devstack-patch-fork-cache-"), "--patch", `Pool=${variant("PoolFeeOffByOne")}`, "--state-dir", stateDir, "--json", "--chain-port", "0", "--queue-port", "0"], { reject: false });
    try {
      const info = await new Promise<StackInfo>((resolve, reject) => {
        let out = "";
        cli.stdout?.on("data", (d: Buffer) => ((out += d.toString()), out.includes("\n") && resolve(StackInfo.parse(JSON.parse(out.split("\n")[0] as string)))));
        void cli.then((r) => reject(new Error(`the CLI exited ${r.exitCode}: ${r.stderr}`)));
      });
      expect(info).toMatchObject({ mode: "fork", pool: "pinned", patches: [{ name: "Pool", source: variant("PoolFeeOffByOne") }] });
      expect(await codeHash({ rpcUrl: info.rpcUrl } as DevStack, info.poolAddress)).toBe(info.patches?.[0]?.codeHash);
    } finally {
      cli.kill("SIGINT");
      const ended = await cli;
      expect(ended.stderr).toMatch(/PATCHED +Pool 0x[0-9a-fA-F]{40}: code 0x[0-9a-f]{64} from .*PoolFeeOffByOne/);
    }
  });

  it("takes a Hardhat 3 artifact (its build-info found beside it) and solc's standard-JSON output, as the .sol gives", async () => {
    // The buggy Pool as a Hardhat 3 project holds it: artifacts/<source>/<Contract>.json naming its build-info.
    const dir = await tempDir("devstack-patch-artifacts-");
    // Its compiler output: the variants' (test/support/patch-variants.ts), the buggy Pool among them, compiled from the same file.
    const output = JSON.parse(await readFile(VARIANTS_PATH, "utf8")) as { contracts: Record<string, Record<string, { evm: { deployedBytecode: { object: string } } }>> };
    const contract = output.contracts["contracts/test/PoolFeeOffByOne.sol"]?.PoolFeeOffByOne;
    await mkdir(path.join(dir, "artifacts", "build-info"), { recursive: true });
    await mkdir(path.join(dir, "artifacts", "contracts", "test", "PoolFeeOffByOne.sol"), { recursive: true });
    await writeFile(path.join(dir, "artifacts", "build-info", "solc-0_8_30-test.output.json"), JSON.stringify({ _format: "hh3-sol-build-info-output-1", id: "solc-0_8_30-test", output }));
    const artifact = path.join(dir, "artifacts", "contracts", "test", "PoolFeeOffByOne.sol", "PoolFeeOffByOne.json");
    await writeFile(artifact, JSON.stringify({ _format: "hh3-artifact-1", contractName: "PoolFeeOffByOne", sourceName: "contracts/test/PoolFeeOffByOne.sol", inputSourceName: "contracts/test/PoolFeeOffByOne.sol", deployedBytecode: `0x${contract?.evm.deployedBytecode.object}`, buildInfoId: "solc-0_8_30-test" }));
    const standardJson = path.join(dir, "output.json");
    await writeFile(standardJson, JSON.stringify(output));

    const fromSol = await stack.patch("Pool", BUGGY);
    const fromArtifact = await stack.patch("Pool", artifact);
    expect(fromArtifact).toMatchObject({ codeHash: fromSol.codeHash, source: `${artifact}:PoolFeeOffByOne` });
    // Compiler output holds every contract compiled: one is named, as solc names them.
    expect((await refusal(stack.patch("Pool", standardJson))).message).toMatch(/holds several contracts \(.*and \d+ more\): name one, as .*output\.json:/);
    expect((await stack.patch("Pool", `${standardJson}:PoolFeeOffByOne`)).codeHash).toBe(fromSol.codeHash);
    // Without its build-info, an artifact lacks the storage layout: refused, saying where it is.
    await rm(path.join(dir, "artifacts", "build-info"), { recursive: true });
    expect((await refusal(stack.patch("Pool", artifact))).code).toBe("patch_source_invalid");
    await stack.patch("Pool", POOL);
  });

  it("an operator's runtime has no patch route, and accepts a code change it is told of only when the chain has that code", async () => {
    // The stack's relayer (anvil's dev account #1), in a runtime of its own that never starts its engine.
    const key = mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 1 }).getHdKey().privateKey as Uint8Array;
    const app = await buildQueueRuntime({ manifest: manifestBytes(stack.manifest), rpcUrl: stack.rpcUrl, artifactsDir: CIRCUIT_BUILD_DIR, relayerPrivateKey: `0x${Buffer.from(key).toString("hex")}` });
    try {
      expect((await app.inject({ method: "POST", url: "/api/dev/patch", payload: { contract: "Pool", source: FIXED } })).statusCode).toBe(404);
      const changes = codeChanges(app);
      if (!changes) throw new Error("the runtime has no code-change entry");
      await expect(changes.accept(manifestBytes({ ...stack.manifest, poolRuntimeCodeHash: keccak256("0x00") }), [])).rejects.toThrow(/the Pool's runtime code hash is 0x[0-9a-f]{64}, the manifest says/);
      await expect(changes.accept(manifestBytes({ ...stack.manifest, deploymentBlock: stack.manifest.deploymentBlock + 1 }), [])).rejects.toThrow("a code change may alter the manifest's code hashes only");
      expect(changes.patched()).toEqual([]);
      const patched = await stack.patch("Pool", BUGGY);
      await changes.accept(manifestBytes(stack.manifest), stack.patches());
      expect(changes.patched()).toEqual([expect.objectContaining({ codeHash: patched.codeHash })]);
      expect(((await app.inject({ method: "GET", url: "/api/queue/config" })).json() as { poolRuntimeCodeHash: string }).poolRuntimeCodeHash).toBe(patched.codeHash);
      await stack.patch("Pool", POOL);
    } finally {
      await app.close();
    }
  });

  it("a persisted stack keeps its patch across a restart (patches.json beside its chain)", async () => {
    const stateDir = await tempDir("devstack-patch-persist-");
    const first = await startStack({ stateDir, persist: true });
    const patched = await first.patch("Pool", BUGGY);
    await first.stop();
    const again = await startStack({ stateDir, persist: true });
    expect(again.patches()).toEqual([expect.objectContaining({ name: "Pool", codeHash: patched.codeHash })]);
    expect(await codeHash(again, again.manifest.poolAddress)).toBe(patched.codeHash);
    await again.stop();
  });

  it("a loaded bundle keeps the patch; the CLI's patch fixes it, and unpatch puts back the bundle's Pool, then the deployed one", async () => {
    const loaded = await startStack({ load: bundle, stateDir: await tempDir("devstack-patch-loaded-") });
    const [buggy] = loaded.patches();
    expect(buggy).toMatchObject({ name: "Pool", source: `${BUGGY}:PoolFeeOffByOne` });
    expect(await codeHash(loaded, loaded.manifest.poolAddress)).toBe(buggy?.codeHash);
    // The failed send, replayed (issue 33, item 2): still failing on the buggy Pool, then going through on the fix.
    expect((await loaded.replay(failed)).verdict.exitCode).toBe(1);

    const cli = await execa(process.execPath, [...CLI, "patch", "Pool", FIXED, "--state-dir", loaded.stateDir], { reject: false });
    expect(cli.exitCode, cli.stderr).toBe(0);
    expect(cli.stdout).toContain("patched Pool");
    const [fixed] = loaded.patches();
    expect(fixed?.source).toBe(`${FIXED}:Pool`);
    expect(await codeHash(loaded, loaded.manifest.poolAddress)).toBe(fixed?.codeHash);
    expect((await loaded.replay(failed)).verdict.exitCode).toBe(0);

    // Back to the code the stack started with, the bundle's (issue 40, item 6); once more, to the code before its patch.
    expect(await loaded.unpatch("Pool")).toMatchObject({ codeHash: buggy?.codeHash, source: buggy?.source });
    expect(loaded.patches()).toEqual([buggy]);
    expect(await codeHash(loaded, loaded.manifest.poolAddress)).toBe(buggy?.codeHash);
    const undone = await loaded.unpatch("Pool");
    expect(loaded.patches()).toEqual([]);
    expect(await codeHash(loaded, loaded.manifest.poolAddress)).toBe(undone.codeHash);
    // The Pool's own source, compiled here, gives back the deployed code (the bundle's, from before its patch).
    expect(fixed?.codeHash).toBe(undone.codeHash);
  });
});
