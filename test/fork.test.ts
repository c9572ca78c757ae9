import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createAnvil } from "@viem/anvil";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keccak256, type Hex } from "viem";
import { ForkUpstreamError, PinError, startDevStack, type DevStack, type DevStackOptions } from "../harness/index.ts";
import { anvilBinaryPath } from "../harness/chain/index.ts";
import { anvilsWith } from "./support/processes.ts";
import { hex, rpc } from "./support/rpc.ts";
import { poolFixture, provenSend } from "./support/pool.ts";
import { createChainClient } from "../src/chain/client.ts";
import { closeProvers, createQueueClient, poolAbi, reviewedFrom } from "../harness/client/index.ts";
import { resumeRelayer } from "./support/stacks.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// Fork caches and state dirs of this file: removed after it, whether its tests passed or not.
const tempDirs: string[] = [];
const tempDir = async (prefix: string) => {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
};
// A local stack plays Sepolia: an anvil with chain id 11155111 holding a deployed Pool. Nothing here
// touches a public RPC.
let upstream: DevStack;
let forkCache: string;
// Registered before the upstream's set-up, so it runs after the upstream's stop.
afterAll(async () => {
  await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});
beforeAll(async () => {
  forkCache = await tempDir("devstack-fork-cache-");
});
withQueueStack({ client: false }, async (started) => {
  ({ stack: upstream } = started);
  // Some history after the Pool's deployment, as on a real network.
  await rpc(upstream.rpcUrl, "anvil_mine", [hex(20)]);
});
// A fork keeps the upstream's answers in this file's folder, never in the user's cache (~/.cache).
const startFork = (options: DevStackOptions) => startDevStack({ forkCacheDir: forkCache, ...options });

const blockHash = async (url: string, n: number | bigint) => (await rpc<{ hash: Hex }>(url, "eth_getBlockByNumber", [hex(n), false])).hash;

describe("fork mode", () => {
  it("forks the upstream at its latest block, pinned, and deploys the fixtures on the fork", async () => {
    const head = Number(await rpc<string>(upstream.rpcUrl, "eth_blockNumber"));
    const fork = await startFork({ forkUrl: upstream.rpcUrl });
    try {
      expect(fork.mode).toBe("fork");
      expect(fork.info.pool).toBe("deployed");
      expect(fork.info.fork).toEqual({ url: upstream.rpcUrl, blockNumber: head, blockHash: await blockHash(upstream.rpcUrl, head) });
      expect(Number(await rpc<string>(fork.rpcUrl, "eth_chainId"))).toBe(11155111);
      // The fork sees the upstream's history...
      expect(await blockHash(fork.rpcUrl, head)).toBe(await blockHash(upstream.rpcUrl, head));
      expect(await rpc(fork.rpcUrl, "eth_getCode", [upstream.manifest.poolAddress, "latest"])).not.toBe("0x");
      // ...and its own new Pool, which the upstream never sees.
      expect(fork.manifest.deploymentBlock).toBeGreaterThan(head);
      expect(fork.manifest.poolAddress).not.toBe(upstream.manifest.poolAddress);
      const code = await rpc<Hex>(fork.rpcUrl, "eth_getCode", [fork.manifest.poolAddress, "latest"]);
      expect(keccak256(code)).toBe(fork.manifest.poolRuntimeCodeHash);
      expect(await rpc(upstream.rpcUrl, "eth_getCode", [fork.manifest.poolAddress, "latest"])).toBe("0x");
      const served = await (await fetch(`${fork.queueUrl}/api/queue/config`)).text();
      expect(served).toBe(await readFile(fork.manifestPath, "utf8"));
    } finally {
      await fork.stop();
    }
  });

  it("forks at a given block", async () => {
    const at = upstream.manifest.deploymentBlock - 1;
    const fork = await startFork({ forkUrl: upstream.rpcUrl, forkBlockNumber: at });
    try {
      expect(fork.info.fork?.blockNumber).toBe(at);
      expect(fork.info.fork?.blockHash).toBe(await blockHash(upstream.rpcUrl, at));
      // Forked before the upstream's Pool existed.
      expect(await rpc(fork.rpcUrl, "eth_getCode", [upstream.manifest.poolAddress, hex(at)])).toBe("0x");
      expect(fork.manifest.deploymentBlock).toBeGreaterThan(at);
    } finally {
      await fork.stop();
    }
  });

  it("replays a fork at a pinned block without the network: the upstream's immutable answers were kept", async () => {
    const forkCacheDir = await tempDir("devstack-fork-cache-");
    const own = await startDevStack();
    const url = own.rpcUrl;
    let first: { pool: string; hash: string | undefined; block: number };
    try {
      await rpc(url, "anvil_mine", [hex(3)]);
      const at = Number(await rpc<string>(url, "eth_blockNumber"));
      const fork = await startDevStack({ forkUrl: url, forkBlockNumber: at, forkCacheDir });
      try {
        first = { pool: fork.manifest.poolAddress, hash: fork.info.fork?.blockHash, block: at };
      } finally {
        await fork.stop();
      }
    } finally {
      await own.stop(); // the upstream is gone
    }
    await expect(startDevStack({ forkUrl: url, forkCacheDir })).rejects.toThrow(ForkUpstreamError); // "latest" needs it
    const replay = await startDevStack({ forkUrl: url, forkBlockNumber: first.block, forkCacheDir });
    try {
      expect(replay.info.fork?.blockHash).toBe(first.hash);
      expect(await blockHash(replay.rpcUrl, first.block)).toBe(first.hash);
      expect(replay.manifest.poolAddress).toBe(first.pool);
      expect(Number(await rpc<string>(replay.rpcUrl, "eth_chainId"))).toBe(11155111);
    } finally {
      await replay.stop();
    }
  });

  it("never shows or writes the fork URL's credentials", async () => {
    const port = new URL(upstream.rpcUrl).port;
    const secretUrl = `http://alice:hunter2pass@127.0.0.1:${port}/?apikey=sk_live_0123456789abcdef`;
    const fork = await startFork({ forkUrl: secretUrl });
    try {
      const written = (await readFile(fork.stackInfoPath, "utf8")) + (await readFile(fork.manifestPath, "utf8"));
      for (const secret of ["hunter2pass", "alice", "sk_live_0123456789abcdef"]) {
        expect(written).not.toContain(secret);
        expect(fork.fork?.displayUrl).not.toContain(secret);
      }
      expect(fork.fork?.displayUrl).toBe(`http://***@127.0.0.1:${port}/?***`);
    } finally {
      await fork.stop();
    }
  });
});

describe("pin mode", () => {
  it("pins a Pool deployed on the upstream: nothing deployed, its deployment block found on the chain", async () => {
    const pinned = await startFork({ forkUrl: upstream.rpcUrl, pool: upstream.manifest.poolAddress });
    try {
      const m = pinned.manifest;
      expect(pinned.info.pool).toBe("pinned");
      expect(m.poolAddress).toBe(upstream.manifest.poolAddress);
      expect(m.deploymentBlock).toBe(upstream.manifest.deploymentBlock);
      expect(m.deploymentBlockHash).toBe(await blockHash(upstream.rpcUrl, upstream.manifest.deploymentBlock));
      const upstreamCode = await rpc<Hex>(upstream.rpcUrl, "eth_getCode", [m.poolAddress, "latest"]);
      expect(m.poolRuntimeCodeHash).toBe(keccak256(upstreamCode));
      // Companions were read from the chain, so they are the upstream's.
      expect({ ...m, relayFees: null }).toEqual({ ...upstream.manifest, relayFees: null });
      // Nothing was deployed: the fork's head is still the fork block.
      expect(Number(await rpc<string>(pinned.rpcUrl, "eth_blockNumber"))).toBe(pinned.info.fork?.blockNumber);
    } finally {
      await pinned.stop();
    }
  });

  it("a fork stack's bundle loads without the upstream: the forked state it touched, the fork block's hash, the same Pool; a relay in flight resumes", async () => {
    const forkCacheDir = await tempDir("devstack-fork-cache-");
    const pinned = await startDevStack({ forkUrl: upstream.rpcUrl, pool: upstream.manifest.poolAddress, forkCacheDir });
    const file = path.join(forkCacheDir, "fork.qdbundle");
    let saved: { manifest: string; head: { number: Hex; hash: Hex }; forkBlock: number; root: bigint; opId: string };
    try {
      const pool = await poolFixture(pinned);
      const queue = createQueueClient({ baseUrl: pinned.queueUrl, reviewed: reviewedFrom(pinned.manifest) });
      const { config, transaction } = await provenSend(pinned, pool, queue, 2);
      // In flight when saved: accepted and broadcast (its checks read all it needs from the upstream), not mined.
      await rpc(pinned.rpcUrl, "evm_setAutomine", [false]);
      const op = await queue.submit("send", config, transaction);
      for (let i = 0; i < 50 && (await queue.status("send", op.id)).state !== "submitted"; i++) await new Promise((r) => setTimeout(r, 100));
      await pinned.save(file);
      saved = {
        manifest: await readFile(pinned.manifestPath, "utf8"),
        head: await rpc(pinned.rpcUrl, "eth_getBlockByNumber", ["latest", false]),
        forkBlock: pinned.info.fork?.blockNumber as number,
        root: await pool.user(0).public.readContract({ address: pinned.manifest.poolAddress, abi: poolAbi, functionName: "getLastRoot" }),
        opId: op.id,
      };
    } finally {
      await pinned.stop();
    }
    const loaded = await startDevStack({ load: file });
    try {
      expect(await readFile(loaded.manifestPath, "utf8")).toBe(saved.manifest);
      expect(loaded.fork).toBeNull(); // a local chain now: no upstream asked
      expect((await rpc<{ hash: Hex }>(loaded.rpcUrl, "eth_getBlockByNumber", [saved.head.number, false])).hash).toBe(saved.head.hash);
      expect(await blockHash(loaded.rpcUrl, saved.forkBlock)).toBe(await blockHash(upstream.rpcUrl, saved.forkBlock));
      const queue = createQueueClient({ baseUrl: loaded.queueUrl, reviewed: reviewedFrom(loaded.manifest) });
      // The Pool, its verifier and tokens came from the upstream: resumed, the relay is mined on them and confirmed.
      await resumeRelayer(loaded);
      expect((await queue.waitFor("send", saved.opId, { timeoutMs: 30_000 })).state).toBe("confirmed");
      const root = await createChainClient(loaded.rpcUrl).readContract({ address: loaded.manifest.poolAddress, abi: poolAbi, functionName: "isKnownRoot", args: [saved.root] });
      expect(root).toBe(true);
    } finally {
      await closeProvers();
      await loaded.stop();
    }
  });

  it("a pinned fork starts again with its upstream stopped and serves the same configuration bytes", async () => {
    // Its own upstream, to stop. The Pool's routes were approved on it: the manifest's route discovery
    // reads their events (eth_getLogs) from the upstream, for the forked range.
    const own = await startDevStack();
    const forkCacheDir = await tempDir("devstack-fork-cache-");
    let options: DevStackOptions;
    let first: string;
    try {
      await rpc(own.rpcUrl, "anvil_mine", [hex(3)]);
      const head = Number(await rpc<string>(own.rpcUrl, "eth_blockNumber"));
      options = { forkUrl: own.rpcUrl, forkBlockNumber: head, forkCacheDir, pool: own.manifest.poolAddress };
      const pinned = await startDevStack(options);
      try {
        first = await (await fetch(`${pinned.queueUrl}/api/queue/config`)).text();
        expect(pinned.manifest.routes.filter((route) => route.action === "external")).not.toEqual([]);
      } finally {
        await pinned.stop();
      }
    } finally {
      await own.stop(); // the upstream is gone
    }
    const replay = await startDevStack(options);
    try {
      expect(replay.info.pool).toBe("pinned");
      expect(await (await fetch(`${replay.queueUrl}/api/queue/config`)).text()).toBe(first);
    } finally {
      await replay.stop();
    }
  });

  it("checks a given deployment block", async () => {
    const pool = upstream.manifest.poolAddress;
    const n = upstream.manifest.deploymentBlock;
    const pinned = await startFork({ forkUrl: upstream.rpcUrl, pool, deploymentBlock: n });
    expect(pinned.manifest.deploymentBlock).toBe(n);
    await pinned.stop();
    await expect(startFork({ forkUrl: upstream.rpcUrl, pool, deploymentBlock: n + 1 })).rejects.toThrow(/already had code at block/);
    await expect(startFork({ forkUrl: upstream.rpcUrl, pool, deploymentBlock: n - 1 })).rejects.toThrow(/no code at --deployment-block/);
  });

  it("refuses an address without code, with nothing left running", async () => {
    const stateDir = await tempDir("devstack-pin-");
    const attempt = startFork({ forkUrl: upstream.rpcUrl, pool: "0x000000000000000000000000000000000000dEaD", stateDir });
    await expect(attempt).rejects.toBeInstanceOf(PinError);
    await expect(attempt).rejects.toThrow(/no contract code at 0x000000000000000000000000000000000000dEaD/);
    expect(await anvilsWith(stateDir)).toEqual([]);
  });
});

describe("a bad upstream", () => {
  it("unreachable: a clear error naming the redacted URL, and no process left", async () => {
    const stateDir = await tempDir("devstack-bad-");
    const attempt = startFork({ forkUrl: "http://127.0.0.1:9/v3/0123456789abcdef0123", stateDir });
    await expect(attempt).rejects.toBeInstanceOf(ForkUpstreamError);
    const message = (await attempt.catch((e: Error) => e.message)) as string;
    expect(message).toContain("http://127.0.0.1:9/v3/***");
    expect(message).not.toContain("0123456789abcdef0123");
    expect(await anvilsWith(stateDir)).toEqual([]);
  });

  it("not Sepolia: refused, naming the chain it is", async () => {
    const other = createAnvil({ anvilBinary: anvilBinaryPath(), port: 0, chainId: 1 });
    await other.start();
    try {
      const port = /Listening on \S+:(\d+)/.exec(other.logs.join(""))?.[1];
      const stateDir = await tempDir("devstack-bad-");
      await expect(startFork({ forkUrl: `http://127.0.0.1:${port}`, stateDir })).rejects.toThrow(/is chain 1, not Sepolia \(11155111\)/);
      expect(await anvilsWith(stateDir)).toEqual([]);
    } finally {
      await other.stop();
    }
  });

  it("pinning needs a fork", async () => {
    await expect(startDevStack({ pool: upstream.manifest.poolAddress })).rejects.toThrow(/needs --fork-url/);
  });
});
