import { describe, expect, it } from "vitest";
import { encodeFunctionData, parseUnits, verifyTypedData, type Address, type Hex } from "viem";
import type { DevStack } from "../harness/index.ts";
import { ACTION_ROUTES, DEFAULT_SWAP_PRICES } from "../harness/deployment/index.ts";
import { Quote, typedDataForSigning } from "../src/schemas/quote.ts";
import { privateKeyToAccount } from "viem/accounts";
import { checkFinalizeFee, type Reservation } from "../src/admission/finalize-checks.ts";
import { DEFAULT_QUOTE_SETTINGS, Quoter } from "../src/quote/quoter.ts";
import { createChainClient } from "../src/chain/client.ts";
import type { DeploymentConfig, ExternalActionRoute } from "../src/config/deployment-config.ts";
import { DEFAULT_RELAY_SETTINGS } from "../src/config/relay-settings.ts";
import { SqliteOperationStore } from "../src/store/store.ts";
import { readFile } from "node:fs/promises";
import { buildQueueRuntime, parseManifest } from "../src/server.ts";
import { CIRCUIT_BUILD_DIR } from "../harness/deployment/index.ts";
import { RELAYER_KEY } from "./support/chain.ts";
import { rpc } from "./support/rpc.ts";
import { withStacks } from "./support/stacks.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// POST /api/queue/quote: signed quotes of approved external actions.
const startStack = withStacks();
let stack: DevStack;
let usdc: Address;
let weth: Address;
let swap: ExternalActionRoute;

withQueueStack({ client: false }, async (started) => {
  ({ stack } = started);
  usdc = stack.manifest.assets.find((a) => a.decimals === 6)?.address as Address;
  weth = stack.manifest.assets.find((a) => a.decimals === 18)?.address as Address;
  swap = stack.manifest.routes.find((r): r is ExternalActionRoute => r.action === "external" && r.id === ACTION_ROUTES.swap) as ExternalActionRoute;
});

const deployment = () => ({ chainId: stack.manifest.chainId, poolAddress: stack.manifest.poolAddress, domain: stack.manifest.domain });
const quote = (body: Record<string, unknown>) =>
  fetch(`${stack.queueUrl}/api/queue/quote`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ deployment: deployment(), route: swap.id, assetIn: usdc, assetOut: weth, amountIn: "30000000", ...body }) });
const problem = async (response: Response) => ({ status: response.status, type: response.headers.get("content-type"), code: ((await response.json()) as { code: string }).code });

describe("POST /api/queue/quote", () => {
  it("answers the route's terms and fees, signed by the relayer over EIP-712 typed data any client can verify", async () => {
    const before = Math.floor(Date.now() / 1000);
    const response = await quote({});
    expect(response.status).toBe(200);
    const q = Quote.parse(await response.json());
    const expected = (30_000_000n * DEFAULT_SWAP_PRICES.usdcToWeth) / 10n ** 18n;
    const fee = (asset: Address) => stack.manifest.relayFees.actions.find((f) => f.route === swap.id && f.asset === asset);
    expect(q).toMatchObject({
      route: swap.id, assetIn: usdc, assetOut: weth, amountIn: "30000000",
      expectedOutput: expected.toString(), minOutput: ((expected * 9950n) / 10000n).toString(),
      fees: { action: fee(usdc)?.action, finalize: fee(weth)?.finalize },
      relayer: stack.relayer.address,
    });
    expect(q.quoteId).toMatch(/^qt_[0-9a-f]{64}$/);
    expect(q.typedData.message.quoteId).toBe(`0x${q.quoteId.slice(3)}`);
    expect(q.typedData.message.configDomain).toBe(stack.manifest.domain);
    expect(q.typedData.domain).toEqual({ name: "queue-devstack quote", version: "1", chainId: 11155111, verifyingContract: stack.manifest.poolAddress });
    const expiry = Number(q.typedData.message.expiry);
    expect(expiry - before).toBeGreaterThanOrEqual(119);
    expect(Date.parse(q.expiresAt) / 1000).toBe(expiry);
    expect(Number(q.deadline)).toBeGreaterThan(expiry);
    expect(await verifyTypedData({ address: stack.relayer.address, signature: q.signature as Hex, ...typedDataForSigning(q) })).toBe(true);
    // Any change to a term breaks the signature.
    const tampered = typedDataForSigning(q);
    tampered.message.minOutput -= 1n;
    expect(await verifyTypedData({ address: stack.relayer.address, signature: q.signature as Hex, ...tampered })).toBe(false);
    // Two quotes, two ids.
    expect(Quote.parse(await (await quote({})).json()).quoteId).not.toBe(q.quoteId);
  });

  it("refuses another deployment, an unapproved route, assets the route does not trade, and amounts the fees eat", async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ deployment: { ...deployment(), poolAddress: "0x000000000000000000000000000000000000dEaD" } }, 422, "deployment_mismatch"],
      [{ deployment: { ...deployment(), domain: `0x${"11".repeat(32)}` } }, 422, "deployment_mismatch"],
      [{ route: `0x${"ab".repeat(32)}` }, 422, "route_not_approved"],
      [{ assetOut: usdc }, 422, "unsupported_asset"],
      [{ assetIn: "0x000000000000000000000000000000000000dEaD" }, 422, "unsupported_asset"],
      [{ amountIn: "1" }, 422, "amount_too_small"],
      [{ amountIn: "0" }, 400, "invalid_request"],
      [{ amountIn: "1e6" }, 400, "invalid_request"],
      [{ route: "swap" }, 400, "invalid_request"],
      [{ deployment: { ...deployment(), chainId: 1 } }, 422, "deployment_mismatch"],
    ];
    for (const [body, status, code] of cases) {
      expect(await problem(await quote(body)), JSON.stringify(body)).toEqual({ status, type: "application/problem+json; charset=utf-8", code });
    }
  });

  it("a pair without a price is a 503 price_unavailable with Retry-After", async () => {
    // Mined before the quote is asked: anvil answers eth_sendTransaction as it queues the block (a loaded machine showed the old price).
    const setPrice = async (price: bigint) => {
      const hash = await rpc<string>(stack.rpcUrl, "eth_sendTransaction", [{
        from: stack.accounts[0]?.address,
        to: swap.adapter.address,
        data: encodeFunctionData({ abi: [{ type: "function", name: "setPrice", inputs: [{ type: "address" }, { type: "address" }, { type: "uint256" }], outputs: [], stateMutability: "nonpayable" }], functionName: "setPrice", args: [usdc, weth, price] }),
      }]);
      while ((await rpc(stack.rpcUrl, "eth_getTransactionReceipt", [hash])) === null) await new Promise((r) => setTimeout(r, 10));
    };
    await setPrice(0n);
    const response = await quote({});
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    expect(((await response.json()) as { code: string }).code).toBe("price_unavailable");
    await setPrice(DEFAULT_SWAP_PRICES.usdcToWeth);
    expect((await quote({})).status).toBe(200);
    expect(parseUnits("1", 18)).toBeGreaterThan(0n);
  });

  it("an amountIn the adapter cannot price (its price overflows): 422 quote_refused naming the revert, not a 503 chain_unavailable (the chain answered)", async () => {
    const response = await quote({ amountIn: (2n ** 247n).toString() });
    expect(response.headers.get("retry-after")).toBeNull();
    const body = (await response.json()) as { status: number; code: string; revert?: { name: string } };
    expect(body).toMatchObject({ status: 422, code: "quote_refused", revert: { name: "Panic" } });
    expect((await quote({})).status).toBe(200);
  });

  it("fails closed: a manifest without fees for an external route and one of its assets is refused, naming both (the quote said fees of 0)", async () => {
    const bytes = await readFile(stack.manifestPath);
    expect(parseManifest(bytes)).toEqual(stack.manifest); // the built manifest has every entry
    const manifest = JSON.parse(bytes.toString("utf8"));
    manifest.relayFees.actions = manifest.relayFees.actions.filter((f: { route: string; asset: string }) => !(f.route === swap.id && f.asset === weth));
    const without = Buffer.from(JSON.stringify(manifest));
    expect(() => parseManifest(without)).toThrow(new RegExp(`relayFees\\.actions: no fee entry for external route swap \\(${swap.id}\\) and asset ${weth.toLowerCase()}`));
    await expect(buildQueueRuntime({ manifest: without, rpcUrl: stack.rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR, store: ":memory:" })).rejects.toThrow(/no fee entry/);
    manifest.relayFees.actions = [];
    expect(() => parseManifest(Buffer.from(JSON.stringify(manifest)))).toThrow(/relayFees\.actions/);
  });

  it("a manifest with a second fee entry for one route and asset (any case) is refused, naming it: the first one found used to win", async () => {
    const manifest = JSON.parse((await readFile(stack.manifestPath)).toString("utf8"));
    const at = manifest.relayFees.actions.length;
    const first = manifest.relayFees.actions.find((f: { route: string; asset: string }) => f.route === swap.id && f.asset === weth);
    manifest.relayFees.actions.push({ ...first, asset: weth.toLowerCase(), finalize: "1" });
    expect(() => parseManifest(Buffer.from(JSON.stringify(manifest)))).toThrow(new RegExp(`relayFees\\.actions\\.${at}: a second fee entry for route ${swap.id} and asset ${weth.toLowerCase()}`));
  });

  it("feeEntry refuses a route and asset without a fee in a config built without the schema, on the quote and the finalize path: 422 unsupported_asset naming both, never a fee of 0", async () => {
    const config: DeploymentConfig = { ...stack.manifest, relayFees: { ...stack.manifest.relayFees, actions: stack.manifest.relayFees.actions.filter((f) => !(f.route === swap.id && f.asset === weth)) } };
    const refusal = { code: "unsupported_asset", status: 422, extensions: { route: swap.id, asset: weth } };
    const chain = createChainClient(stack.rpcUrl);
    const store = new SqliteOperationStore(":memory:");
    try {
      const quoter = new Quoter({ config, chain, account: privateKeyToAccount(RELAYER_KEY), store, settings: DEFAULT_QUOTE_SETTINGS, chainTimeoutMs: 3_000 });
      const request = { deployment: deployment(), route: swap.id, assetIn: usdc, assetOut: weth, amountIn: "30000000" };
      await expect(quoter.quote(request, "127.0.0.1")).rejects.toMatchObject(refusal);
      expect(store.countQuotes()).toBe(0);
      // A settled reservation of that route paying out in that asset, as the Pool would hold it.
      const reservation = { state: "settled", routeId: swap.id, inputAsset: usdc, outputAsset: weth, amountIn: 30_000_000n, amountOut: 10n ** 16n, finalizeFee: 10n ** 14n, finalizer: stack.relayer.address, deadline: 0n, precommitment: 1n, blockTimestamp: 0n } as Reservation;
      const context = { config, chain, relayer: stack.relayer.address, settings: DEFAULT_RELAY_SETTINGS, spender: () => undefined };
      await expect(checkFinalizeFee(context, { deployment: deployment(), reservationId: `0x${"11".repeat(32)}` }, reservation, store)).rejects.toMatchObject(refusal);
    } finally {
      store.close();
    }
  });

  it("caps each client's unexpired quotes: past the cap, 429 too_many_quotes with a Retry-After until the soonest one expires", async () => {
    const capped = await startStack({ runtime: { quotes: { maxLivePerClient: 2 } } });
    const ask = () =>
      fetch(`${capped.queueUrl}/api/queue/quote`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ deployment: { chainId: capped.manifest.chainId, poolAddress: capped.manifest.poolAddress, domain: capped.manifest.domain }, route: swap.id, assetIn: usdc, assetOut: weth, amountIn: "30000000" }),
      });
    expect((await ask()).status).toBe(200);
    expect((await ask()).status).toBe(200);
    const third = await ask();
    expect(await problem(third)).toEqual({ status: 429, type: "application/problem+json; charset=utf-8", code: "too_many_quotes" });
    const wait = Number(third.headers.get("retry-after"));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(121);
  });
});
