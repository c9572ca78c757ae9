import { readdir, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { buildQueueRuntime, prepareQueueRuntime } from "../src/server.ts";
import { CIRCUIT_BUILD_DIR } from "../harness/deployment/index.ts";
import { RELAYER_KEY } from "./support/chain.ts";
import { builtRuntime, startRuntimeProcess } from "./support/runtime-process.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// The runtime as an operator runs it: src/ alone, given a manifest, an RPC URL and a relayer key.
let stack: DevStack;
withQueueStack({ client: false }, (started) => ({ stack } = started));


describe("the queue runtime on its own", () => {
  it("never imports the harness", async () => {
    const files = (await readdir("src", { recursive: true })).filter((f) => f.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      expect(await readFile(path.join("src", file), "utf8"), file).not.toMatch(/from\s+["'][^"']*harness/);
    }
  });

  it("serves a manifest from its CLI with secrets from the environment", async () => {
    // From source, as `npm run queue-runtime` starts it; the other launches run this run's build of the same code.
    const { url, child } = await startRuntimeProcess(stack, ["--store", ":memory:", "--cors-origin", "https://app.example", "--chain-name", "Acme Sepolia"], { fromSource: true });
    try {
      const served = await (await fetch(`${url}/api/queue/config`)).text();
      expect(served).toBe(await readFile(stack.manifestPath, "utf8"));
      // An operator's runtime lets only the origins it names call it from a browser: not even localhost.
      const allowed = await fetch(`${url}/api/queue/config`, { headers: { origin: "https://app.example" } });
      expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example");
      for (const origin of ["http://localhost:5173", "https://app.example.evil", "http://app.example"]) {
        const refused = await fetch(`${url}/api/queue/send-relay`, { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST" } });
        expect(refused.headers.get("access-control-allow-origin"), origin).toBeNull();
      }
      const networks = (await (await fetch(`${url}/api/queue/networks`)).json()) as { supportedChains: Array<{ addEthereumChainParameter: unknown }> };
      expect(networks.supportedChains[0]?.addEthereumChainParameter).toMatchObject({ chainId: "0xaa36a7", chainName: "Acme Sepolia", rpcUrls: [stack.rpcUrl] });
    } finally {
      child.kill("SIGTERM");
      const result = await child;
      expect(result.exitCode).toBe(0);
      expect(`${String(result.stdout)}${String(result.stderr)}`).not.toContain(RELAYER_KEY.slice(2));
    }
  });

  it("without --cors-origin answers no CORS headers; a malformed origin is refused at start", async () => {
    const { url, child } = await startRuntimeProcess(stack, ["--store", ":memory:"]);
    try {
      const answer = await fetch(`${url}/api/queue/config`, { headers: { origin: "http://localhost:5173" } });
      expect(answer.status).toBe(200);
      expect(answer.headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      child.kill("SIGTERM");
      await child;
    }
    const bad = await execa(process.execPath, [...builtRuntime(), "--port", "0", "--manifest", stack.manifestPath, "--cors-origin", "https://app.example/"], {
      env: { QUEUE_RPC_URL: stack.rpcUrl, QUEUE_RELAYER_KEY: RELAYER_KEY },
      reject: false,
    });
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr.trim()).toMatch(/^queue-runtime: CorsOriginError: CORS origin "https:\/\/app.example\/" is not an origin/);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("takes its quote terms and in-flight limits from flags, and refuses a number flag out of its range", async () => {
    const { url, child } = await startRuntimeProcess(stack, ["--store", ":memory:", "--max-quotes-per-client", "1", "--quote-valid-for", "30", "--quote-slippage-bps", "1000"]);
    try {
      const swap = stack.manifest.routes.find((r) => r.action === "external" && r.kind === "sync") as { id: string };
      const [usdc, weth] = [6, 18].map((decimals) => stack.manifest.assets.find((a) => a.decimals === decimals)?.address);
      const ask = () =>
        fetch(`${url}/api/queue/quote`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ deployment: { chainId: stack.manifest.chainId, poolAddress: stack.manifest.poolAddress, domain: stack.manifest.domain }, route: swap.id, assetIn: usdc, assetOut: weth, amountIn: "30000000" }),
        });
      const first = await ask();
      expect(first.status).toBe(200);
      const quote = (await first.json()) as { expectedOutput: string; minOutput: string; expiresAt: string };
      expect(BigInt(quote.minOutput)).toBe((BigInt(quote.expectedOutput) * 9000n) / 10000n);
      expect(Date.parse(quote.expiresAt) - Date.now()).toBeLessThanOrEqual(30_000);
      const second = await ask();
      expect(second.status).toBe(429);
      expect(await second.json()).toMatchObject({ code: "too_many_quotes", limit: 1 });
    } finally {
      child.kill("SIGTERM");
      await child;
    }
    // NaN, a fraction or a value past its range would switch a limit off or mean nothing: one line, exit 2.
    for (const flags of [["--confirmations", "abc"], ["--max-in-flight", "0"], ["--quote-slippage-bps", "10001"], ["--port", "1.5"], ["--quote-valid-for", "900", "--quote-settle-within", "600"], ["--max-quote-per-client", "1"]]) {
      const bad = await execa(process.execPath, [...builtRuntime(), "--port", "0", "--manifest", stack.manifestPath, ...flags], {
        env: { QUEUE_RPC_URL: stack.rpcUrl, QUEUE_RELAYER_KEY: RELAYER_KEY },
        reject: false,
      });
      expect(bad.exitCode, flags.join(" ")).toBe(2);
      expect(bad.stderr.trim().split("\n"), flags.join(" ")).toHaveLength(1);
      expect(bad.stderr, flags.join(" ")).toMatch(/^queue-runtime: (--(confirmations|max-in-flight|quote-slippage-bps|port|quote-settle-within) |Unknown option '--max-quote-per-client')/);
    }
  });

  it("refuses to start when the chain contradicts the manifest", async () => {
    const manifest = JSON.parse(await readFile(stack.manifestPath, "utf8"));
    const variants: Array<[string, (m: Record<string, unknown>) => void, RegExp]> = [
      ["code hash", (m) => (m.poolRuntimeCodeHash = `0x${"11".repeat(32)}`), /runtime code hash/],
      ["block hash", (m) => (m.deploymentBlockHash = `0x${"22".repeat(32)}`), /block \d+ is 0x/],
      ["pool", (m) => (m.poolAddress = "0x000000000000000000000000000000000000dEaD"), /no contract at poolAddress/],
    ];
    for (const [, mutate, error] of variants) {
      const copy = structuredClone(manifest);
      mutate(copy);
      await expect(buildQueueRuntime({ manifest: Buffer.from(JSON.stringify(copy)), rpcUrl: stack.rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR })).rejects.toThrow(error);
      // Built ahead (as a dev stack does while anvil boots), the same check refuses it before it can
      // listen, and closes it.
      const prepared = await prepareQueueRuntime({ manifest: Buffer.from(JSON.stringify(copy)), rpcUrl: stack.rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR });
      let closed = false;
      prepared.app.addHook("onClose", async () => void (closed = true));
      await expect(prepared.check({})).rejects.toThrow(error);
      expect(closed).toBe(true);
    }
  });

  it("checks code hashes with a node that has no eth_getProof too (the code asked and hashed here)", async () => {
    const manifest = await readFile(stack.manifestPath);
    const copy = JSON.parse(manifest.toString("utf8"));
    copy.queue.proof.verifier.runtimeCodeHash = `0x${"33".repeat(32)}`;
    // A node that answers eth_getProof "method not found", each call of a batch on its own.
    const node = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString())).on("end", async () => {
        const parsed = JSON.parse(body) as { id: number; method: string } | Array<{ id: number; method: string }>;
        const answers = await Promise.all(
          (Array.isArray(parsed) ? parsed : [parsed]).map(async (call) =>
            call.method === "eth_getProof"
              ? { jsonrpc: "2.0", id: call.id, error: { code: -32601, message: "the method eth_getProof does not exist/is not available" } }
              : (await fetch(stack.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(call) })).json(),
          ),
        );
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(parsed) ? answers : answers[0]));
      });
    });
    await new Promise<void>((resolve) => node.listen(0, "127.0.0.1", resolve));
    const rpcUrl = `http://127.0.0.1:${(node.address() as AddressInfo).port}`;
    try {
      const app = await buildQueueRuntime({ manifest, rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR, store: ":memory:" });
      await app.close();
      await expect(buildQueueRuntime({ manifest: Buffer.from(JSON.stringify(copy)), rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR })).rejects.toThrow(
        /the Pool's verifier is 0x[0-9a-fA-F]{40} with code 0x[0-9a-f]{64}, the manifest says/,
      );
    } finally {
      node.closeAllConnections();
      await new Promise((resolve) => node.close(resolve));
    }
  });

  it("is built ahead with no chain to ask, and checked against the chain once it answers", async () => {
    const manifest = await readFile(stack.manifestPath);
    // Nothing listens on port 9: building ahead asks no chain; checking does, and fails.
    const unreachable = await prepareQueueRuntime({ manifest, rpcUrl: "http://127.0.0.1:9", relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR, store: ":memory:" });
    let closed = false;
    unreachable.app.addHook("onClose", async () => void (closed = true));
    await expect(unreachable.check({})).rejects.toThrow();
    expect(closed).toBe(true);
    const prepared = await prepareQueueRuntime({ manifest, rpcUrl: stack.rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR, store: ":memory:" });
    const app = await prepared.check({ publicRpcUrl: "http://wallet.example:8545" });
    try {
      expect((await app.inject({ url: "/api/queue/config" })).body).toBe(manifest.toString("utf8"));
      // What needs the chain's own URL is given with the check.
      expect((await app.inject({ url: "/api/queue/networks" })).body).toContain("http://wallet.example:8545");
    } finally {
      await app.close();
    }
  });

  it("refuses an invalid manifest or a relayer key the manifest does not name", async () => {
    const bytes = await readFile(stack.manifestPath);
    await expect(buildQueueRuntime({ manifest: Buffer.from("{"), rpcUrl: stack.rpcUrl, artifactsDir: CIRCUIT_BUILD_DIR })).rejects.toThrow(/not JSON/);
    const extra = { ...JSON.parse(bytes.toString()), secret: "x" };
    await expect(buildQueueRuntime({ manifest: Buffer.from(JSON.stringify(extra)), rpcUrl: stack.rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR })).rejects.toThrow(
      /does not match the configuration schema/,
    );
    await expect(buildQueueRuntime({ manifest: bytes, rpcUrl: stack.rpcUrl, artifactsDir: CIRCUIT_BUILD_DIR })).rejects.toThrow(/relays as nobody/);
    const file = path.join(stack.stateDir, "tampered.json");
    await writeFile(file, bytes);
    const child = await execa(process.execPath, [...builtRuntime(), "--port", "0", "--manifest", file], {
      env: { QUEUE_RPC_URL: "http://127.0.0.1:9/v3/0123456789abcdef0123", QUEUE_RELAYER_KEY: RELAYER_KEY },
      reject: false,
    });
    expect(child.exitCode).toBe(1);
    expect(child.stderr).not.toContain("0123456789abcdef0123");
  });
});
