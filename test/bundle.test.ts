import { copyFile, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { erc20Abi, type Address, type Hex } from "viem";
import { BundleError, startDevStack } from "../harness/index.ts";
import { closeProvers, createQueueClient, poolAbi, reviewedFrom } from "../harness/client/index.ts";
import { poolFixture, provenSend } from "./support/pool.ts";
import { rpc } from "./support/rpc.ts";
import { engineState, resumeRelayer, withStacks } from "./support/stacks.ts";
import { withTempDirs } from "./support/temp-dirs.ts";
import { builtCli } from "./support/cli.ts";

// Repro bundles: a local stack saved to one file and brought back elsewhere, operations included.
const tempDir = withTempDirs();
const startStack = withStacks();
let dir: string;
beforeAll(async () => {
  dir = await tempDir("devstack-bundle-");
});
afterAll(async () => {
  await closeProvers();
});

const head = (url: string) => rpc<{ number: Hex; hash: Hex }>(url, "eth_getBlockByNumber", ["latest", false]);

describe("repro bundles", () => {
  it("save -> load elsewhere: the same blocks, Pool, roots, balances and operations; one in flight waits, then resumes with the relayer", async () => {
    const first = await startStack();
    const pool = await poolFixture(first);
    const queue = createQueueClient({ baseUrl: first.queueUrl, reviewed: reviewedFrom(first.manifest) });
    const config = await queue.beforePrepare();
    const send = async (from: number) => (await provenSend(first, pool, queue, from)).transaction;
    const confirmed = await queue.waitFor("send", (await queue.submit("send", config, await send(2))).id);
    expect(confirmed.state).toBe("confirmed");
    // One in flight when the bundle is taken: broadcast, not mined (mining held).
    const pendingTx = await send(3);
    await rpc(first.rpcUrl, "evm_setAutomine", [false]);
    const inFlight = await queue.submit("send", config, pendingTx);
    for (let i = 0; i < 50 && (await queue.status("send", inFlight.id)).state !== "submitted"; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await queue.status("send", inFlight.id)).state).toBe("submitted");

    const file = path.join(dir, "repro.qdbundle");
    const t0 = performance.now();
    const { bytes } = await first.save(file);
    const saveMs = performance.now() - t0;
    const before = { head: await head(first.rpcUrl), root: await pool.user(0).public.readContract({ address: first.manifest.poolAddress, abi: poolAbi, functionName: "getLastRoot" }), manifest: await readFile(first.manifestPath, "utf8") };
    const holder = first.accounts[2]?.address as Address;
    const balance = await pool.user(0).public.readContract({ address: pool.asset, abi: erc20Abi, functionName: "balanceOf", args: [holder] });
    await first.stop();

    // Elsewhere: a copy of the file, a fresh state dir.
    const moved = path.join(await tempDir("devstack-elsewhere-"), "copy.qdbundle");
    await copyFile(file, moved);
    const t1 = performance.now();
    const second = await startStack({ load: moved });
    const loadMs = performance.now() - t1;
    try {
      console.log(`bundle ${bytes} bytes; save ${saveMs.toFixed(0)} ms, load (stack ready) ${loadMs.toFixed(0)} ms`);
      expect(await readFile(second.manifestPath, "utf8")).toBe(before.manifest);
      const block = await rpc<{ hash: Hex }>(second.rpcUrl, "eth_getBlockByNumber", [before.head.number, false]);
      expect(block.hash).toBe(before.head.hash);
      const client = (await poolFixture(second)).user(0).public;
      // The saved root is a root of the loaded tree (the resumed operation may already have added one).
      expect(await client.readContract({ address: second.manifest.poolAddress, abi: poolAbi, functionName: "isKnownRoot", args: [before.root] })).toBe(true);
      expect(await client.readContract({ address: pool.asset, abi: erc20Abi, functionName: "balanceOf", args: [holder] })).toBe(balance);
      const again = createQueueClient({ baseUrl: second.queueUrl, reviewed: reviewedFrom(second.manifest) });
      expect((await again.status("send", confirmed.id)).state).toBe("confirmed");
      // The operation in flight waits, as saved, with the relayer paused: nothing is signed or sent on a load.
      expect(await engineState(second)).toBe("paused");
      expect((await again.status("send", inFlight.id)).state).toBe("submitted");
      // Resumed (ctl relayer resume), its stored transaction is broadcast again and mined.
      await resumeRelayer(second);
      expect((await again.waitFor("send", inFlight.id, { timeoutMs: 30_000 })).state).toBe("confirmed");
    } finally {
      await second.stop();
    }
  });

  it("the CLI saves a running stack (save) and starts from the bundle (--load), serving the saved manifest", async () => {
    const stack = await startStack();
    const file = path.join(dir, "cli.qdbundle");
    const manifest = await readFile(stack.manifestPath, "utf8");
    try {
      const saved = await execa(process.execPath, [...builtCli(), "save", file, "--state-dir", stack.stateDir], { reject: false });
      expect(saved.exitCode, saved.stderr).toBe(0);
      expect(saved.stdout).toContain(`saved ${file}`);
    } finally {
      await stack.stop();
    }
    const stateDir = await tempDir("devstack-cli-load-");
    const cli = execa(process.execPath, [...builtCli(), "--load", file, "--state-dir", stateDir, "--json", "--chain-port", "0", "--queue-port", "0"], { reject: false });
    try {
      const info = await new Promise<{ queueUrl: string }>((resolve, reject) => {
        let out = "";
        cli.stdout?.on("data", (d: Buffer) => ((out += d.toString()), out.includes("\n") && resolve(JSON.parse(out.split("\n")[0] as string))));
        void cli.then((r) => reject(new Error(`the CLI exited ${r.exitCode}: ${r.stderr}`)));
      });
      expect(await (await fetch(`${info.queueUrl}/api/queue/config`)).text()).toBe(manifest);
    } finally {
      cli.kill("SIGINT");
      await cli;
    }
  });

  it("refuses a damaged bundle, another format version, or a non-empty state dir, before anvil starts", async () => {
    const stateDir = path.join(dir, "persisted");
    const stack = await startStack({ stateDir, persist: true });
    const good = path.join(dir, "good.qdbundle");
    try {
      await stack.save(good);
    } finally {
      await stack.stop();
    }
    await expect(startDevStack({ load: good, stateDir })).rejects.toThrow(/already holds a stack/);
    const bytes = await readFile(good);
    const damaged = path.join(dir, "damaged.qdbundle");
    await writeFile(damaged, bytes.subarray(0, bytes.length >> 1));
    const future = path.join(dir, "future.qdbundle");
    await writeFile(future, gzipSync(JSON.stringify({ ...JSON.parse(gunzipSync(bytes).toString()), version: 99 })));
    await expect(startDevStack({ load: damaged })).rejects.toThrow(BundleError);
    await expect(startDevStack({ load: future })).rejects.toThrow(/format version 99; this queue-devstack reads versions 1 and 2/);
    await expect(startDevStack({ load: path.join(dir, "missing.qdbundle") })).rejects.toThrow(BundleError);
  });
});
