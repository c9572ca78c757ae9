import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { decodeFunctionResult, encodeFunctionData, keccak256, parseAbi, type Hex } from "viem";
import { startDevStack, type DevStack } from "../harness/index.ts";
import { DeploymentConfig } from "../src/config/deployment-config.ts";
import { NetworkList } from "../src/config/networks.ts";
import { AssetsSnapshot } from "../src/config/assets-snapshot.ts";
import { clients } from "./support/chain.ts";
import { hex, rpc } from "./support/rpc.ts";
import { withQueueStack } from "./support/queue-stack.ts";

let stack: DevStack;
withQueueStack({ client: false }, (started) => ({ stack } = started));

const get = (path: string, init?: RequestInit) => fetch(`${stack.queueUrl}${path}`, init);

async function call(to: string, signature: string, args: unknown[] = []): Promise<unknown> {
  const abi = parseAbi([signature]);
  const name = (abi[0] as { name: string }).name;
  const data = encodeFunctionData({ abi, functionName: name, args } as never);
  const result = await rpc<Hex>(stack.rpcUrl, "eth_call", [{ to, data }, "latest"]);
  return decodeFunctionResult({ abi, functionName: name, data: result } as never);
}

describe("a local stack", () => {
  it("serves manifest.json byte for byte at GET /api/queue/config", async () => {
    const response = await get("/api/queue/config", { headers: { accept: "application/json" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const served = Buffer.from(await response.arrayBuffer());
    const file = await readFile(stack.manifestPath);
    expect(served.equals(file)).toBe(true);
    expect(DeploymentConfig.parse(JSON.parse(file.toString()))).toEqual(stack.manifest);

    const etag = response.headers.get("etag");
    expect(etag).toBeTruthy();
    const revalidated = await get("/api/queue/config", { headers: { "if-none-match": etag as string } });
    expect(revalidated.status).toBe(304);
  });

  it("writes a manifest that matches the chain, checked by independent reads", async () => {
    const m = stack.manifest;
    expect(Number(await rpc<string>(stack.rpcUrl, "eth_chainId"))).toBe(11155111);
    expect(m.chainId).toBe(11155111);

    const code = await rpc<Hex>(stack.rpcUrl, "eth_getCode", [m.poolAddress, "latest"]);
    expect(code.length).toBeGreaterThan(2);
    expect(keccak256(code)).toBe(m.poolRuntimeCodeHash);

    const block = await rpc<{ hash: string }>(stack.rpcUrl, "eth_getBlockByNumber", [hex(m.deploymentBlock), false]);
    expect(block.hash).toBe(m.deploymentBlockHash);
    // The deployment block is the first with code at the Pool's address.
    expect(await rpc(stack.rpcUrl, "eth_getCode", [m.poolAddress, hex(m.deploymentBlock - 1)])).toBe("0x");
    expect(await rpc(stack.rpcUrl, "eth_getCode", [m.poolAddress, hex(m.deploymentBlock)])).toBe(code);

    expect(BigInt(m.domain)).toBe(await call(m.poolAddress, "function domain() view returns (uint256)"));
    expect(await call(m.poolAddress, "function accountRegistry() view returns (address)")).toBe(m.accountRegistry.address);
    expect(await call(m.poolAddress, "function receiveDirectory() view returns (address)")).toBe(m.receiveDirectory.address);
    expect(await call(m.poolAddress, "function supportedAssets() view returns (address[])")).toEqual(m.assets.map((a) => a.address));
    for (const asset of m.assets) {
      expect(await call(asset.address, "function decimals() view returns (uint8)")).toBe(asset.decimals);
      expect(await call(asset.address, "function symbol() view returns (string)")).toBe(asset.symbol);
    }
    expect(new Set(m.assets.map((a) => a.decimals))).toEqual(new Set([6, 18]));
    expect(m.relayFees.relayer).toBe(stack.relayer.address);
  });

  it("keeps stack facts out of the config and in stack.json", async () => {
    const info = JSON.parse(await readFile(stack.stackInfoPath, "utf8"));
    expect(info).toMatchObject({ mode: "local", pool: "deployed", rpcUrl: stack.rpcUrl, queueUrl: stack.queueUrl, fork: null });
    expect(info.processes.anvil.pid).toBe(stack.chainPid);
    expect(JSON.stringify(stack.manifest)).not.toContain(stack.rpcUrl);
    // The relayer's key is not written anywhere a dev account's is.
    expect(info.devAccounts.map((a: { address: string }) => a.address)).not.toContain(stack.relayer.address);
  });

  it("lists Sepolia with the stack's RPC at GET /api/queue/networks", async () => {
    const response = await get("/api/queue/networks");
    expect(response.status).toBe(200);
    const body = NetworkList.parse(await response.json());
    expect(body.supportedChains).toHaveLength(1);
    expect(body.supportedChains[0]).toMatchObject({
      chainId: 11155111,
      chainIdHex: "0xaa36a7",
      nativeCurrency: { symbol: "ETH", decimals: 18 },
      walletRpcUrl: stack.rpcUrl,
      rpcUrl: stack.rpcUrl,
      explorerUrl: null,
    });
    // What a wallet takes (EIP-3085), named so nobody mistakes the dev chain for the real Sepolia.
    expect(body.supportedChains[0]?.name).toMatch(/local/);
    expect(body.supportedChains[0]?.addEthereumChainParameter).toEqual({
      chainId: "0xaa36a7",
      chainName: body.supportedChains[0]?.name,
      nativeCurrency: { name: "Sepolia Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: [stack.rpcUrl],
    });
  });

  it("lets a front end on any localhost port call the queue (CORS), with preflight", async () => {
    for (const origin of ["http://localhost:5173", "http://127.0.0.1:3000", "http://[::1]:8080"]) {
      const preflight = await get("/api/queue/send-relay", {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type,idempotency-key" },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("access-control-allow-origin")).toBe(origin);
      expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
      expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("idempotency-key");
    }
    // A real call's answer, a problem included, is readable by the page, and so are the headers it needs.
    const answer = await get("/api/queue/send-status?id=op_nope", { headers: { origin: "http://localhost:5173" } });
    expect(answer.status).toBe(404);
    expect(answer.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(answer.headers.get("access-control-expose-headers")).toContain("retry-after");
    expect(answer.headers.get("vary")).toMatch(/origin/i);
    // Any other site is not allowed: no CORS headers, so the browser refuses the page the answer.
    for (const origin of ["https://evil.example", "http://localhost.evil.example", "http://127.0.0.1.evil.example:80"]) {
      const refused = await get("/api/queue/config", { headers: { origin } });
      expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    }
  });

  it("reads assets at a named block, and at an older block on request", async () => {
    const before = AssetsSnapshot.parse(await (await get("/api/queue/assets")).json());
    const chainBlock = await rpc<{ hash: string }>(stack.rpcUrl, "eth_getBlockByNumber", [hex(before.block.number), false]);
    expect(before.block.hash).toBe(chainBlock.hash);
    expect(before.assets.map((a) => a.address)).toEqual(stack.manifest.assets.map((a) => a.address));
    expect(before.assets.every((a) => a.supported && a.poolBalance === "0")).toBe(true);

    // Move funds into the Pool: a new block with another balance.
    const asset = stack.manifest.assets[0] as { address: Hex };
    const { wallet, public: client } = clients(stack.rpcUrl, stack.accounts[1]?.privateKey as Hex);
    const hash = await wallet.writeContract({
      address: asset.address,
      abi: parseAbi(["function transfer(address,uint256) returns (bool)"]),
      functionName: "transfer",
      args: [stack.manifest.poolAddress, 12345n],
    });
    // Mined: anvil answers eth_sendTransaction before its block is mined, so a receipt read at once can be null.
    await client.waitForTransactionReceipt({ hash });

    const after = AssetsSnapshot.parse(await (await get("/api/queue/assets")).json());
    expect(after.block.number).toBeGreaterThan(before.block.number);
    expect(after.assets[0]?.poolBalance).toBe("12345");
    const atOld = AssetsSnapshot.parse(await (await get(`/api/queue/assets?blockNumber=${before.block.number}`)).json());
    expect(atOld.block).toEqual(before.block);
    expect(atOld.assets[0]?.poolBalance).toBe("0");
  });
});

describe("errors are RFC 9457 problems with a stable code", () => {
  async function problem(path: string, init?: RequestInit) {
    const response = await get(path, init);
    expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const body = (await response.json()) as { status: number; code: string; type: string; title: string; detail: string };
    expect(body.status).toBe(response.status);
    expect(body.type).toContain(body.code);
    expect(body.title && body.detail).toBeTruthy();
    return body;
  }

  it("unknown route: 404 route_not_found", async () => {
    expect(await problem("/api/queue/nope")).toMatchObject({ status: 404, code: "route_not_found" });
    expect(await problem("/")).toMatchObject({ status: 404, code: "route_not_found" });
  });

  it("wrong method: 405 with Allow", async () => {
    const response = await get("/api/queue/config", { method: "DELETE" });
    expect(response.headers.get("allow")).toBe("GET");
    expect(await problem("/api/queue/config", { method: "POST" })).toMatchObject({ status: 405, code: "method_not_allowed" });
  });

  it("bad query parameters: 400 invalid_request", async () => {
    for (const bad of ["abc", "-1", "1.5", "", "0x10", "99999999999999999999"]) {
      expect(await problem(`/api/queue/assets?blockNumber=${bad}`)).toMatchObject({ status: 400, code: "invalid_request" });
    }
    expect(await problem("/api/queue/assets?block=1")).toMatchObject({ status: 400, code: "invalid_request" });
  });

  it("a block that does not exist: 404 block_not_found; before the Pool: 422", async () => {
    expect(await problem("/api/queue/assets?blockNumber=900000")).toMatchObject({ status: 404, code: "block_not_found" });
    expect(await problem("/api/queue/assets?blockNumber=0")).toMatchObject({ status: 422, code: "block_before_deployment" });
  });

  it("a malformed URL: 400 problem; a text body: 415", async () => {
    expect(await problem("/api/queue/%")).toMatchObject({ status: 400, code: "invalid_request" });
    const post = { method: "POST", body: "hello", headers: { "content-type": "text/plain" } };
    expect(await problem("/api/queue/send-relay", post)).toMatchObject({ status: 415, code: "unsupported_media_type" });
  });

  it("malformed and oversized bodies: 400 and 413", async () => {
    const post = (body: string, type = "application/json") => ({ method: "POST", body, headers: { "content-type": type } });
    expect(await problem("/api/queue/send-relay", post("{not json"))).toMatchObject({ status: 400, code: "invalid_request" });
    expect(await problem("/api/queue/send-relay", post("{}"))).toMatchObject({ status: 400, code: "invalid_request" });
    expect(await problem("/api/queue/send-relay", post("x".repeat(300 * 1024)))).toMatchObject({ status: 413, code: "payload_too_large" });
    expect(await problem("/api/queue/send-relay", post("a=b", "application/x-www-form-urlencoded"))).toMatchObject({
      status: 415,
      code: "unsupported_media_type",
    });
  });
});

describe("several stacks", () => {
  it("but not two from one state dir", async () => {
    const stateDir = stack.stateDir;
    await expect(startDevStack({ stateDir })).rejects.toThrow(/already running from .* in this process/);
    expect(Number(await rpc<string>(stack.rpcUrl, "eth_chainId"))).toBe(11155111); // the first one is untouched
  });

  it("run at once in one process, on their own ports, with the same local addresses", async () => {
    const [a, b] = await Promise.all([startDevStack(), startDevStack()]);
    try {
      expect(new Set([a.rpcUrl, b.rpcUrl, stack.rpcUrl]).size).toBe(3);
      expect(new Set([a.queueUrl, b.queueUrl, stack.queueUrl]).size).toBe(3);
      // Deterministic: the same fixtures at the same addresses on every fresh chain.
      expect(a.manifest.poolAddress).toBe(stack.manifest.poolAddress);
      expect(b.manifest.assets).toEqual(stack.manifest.assets);
      const config = (await (await fetch(`${b.queueUrl}/api/queue/config`)).json()) as { poolAddress: string };
      expect(config.poolAddress).toBe(b.manifest.poolAddress);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
