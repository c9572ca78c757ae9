import { describe, expect, it } from "vitest";
import { createWalletClient, http, parseAbi, parseUnits, type Abi, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { startDevStack, type DevStack } from "../harness/index.ts";
import { ACTION_ROUTES, ROUTE_KIND } from "../harness/deployment/index.ts";
import { createAccountKeys, createQueueClient, precommitmentOf, randomFieldElement, reviewedFrom, toRelayRequest } from "../harness/client/index.ts";
import { Quote } from "../src/schemas/quote.ts";
import type { DeploymentConfig, ExternalActionRoute } from "../src/config/deployment-config.ts";
import { verifyDeployment } from "../src/chain/verify-deployment.ts";
import { loadFixtures } from "../harness/deployment/index.ts";
import { RELAYER_KEY } from "./support/chain.ts";
import { GAS, type poolFixture } from "./support/pool.ts";
import { rpc } from "./support/rpc.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// An external action through the queue: quote, prove with the quote's terms, submit to withdraw-relay.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let weth: Address;

withQueueStack({}, async (started) => {
  ({ stack, pool } = started);
  weth = stack.manifest.assets.find((a) => a.decimals === 18)?.address as Address;
});

const deployment = () => ({ chainId: stack.manifest.chainId, poolAddress: stack.manifest.poolAddress, domain: stack.manifest.domain });
const post = (s: DevStack, path: string, body: unknown) => fetch(`${s.queueUrl}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

async function quoteFor(s: DevStack, amountIn: bigint, route: Hex = ACTION_ROUTES.swap): Promise<Quote> {
  const response = await post(s, "/api/queue/quote", { deployment: deployment(), route, assetIn: pool.asset, assetOut: weth, amountIn: amountIn.toString() });
  expect(response.status).toBe(200);
  return Quote.parse(await response.json());
}

/** A note funded with amountIn + the action fee, spent in an action with the quote's terms (changed by `change`). */
async function proveAction(q: Quote, change: { minOutput?: bigint; recipient?: Address; fee?: bigint } = {}) {
  const keys = createAccountKeys();
  const amountIn = BigInt(q.amountIn);
  const fee = change.fee ?? BigInt(q.fees.action);
  const { state, input } = await pool.fundedNote(2, keys, amountIn + fee);
  const blinding = randomFieldElement();
  const action = {
    routeId: q.route as Hex,
    outputAsset: q.assetOut as Address,
    minOutput: change.minOutput ?? BigInt(q.minOutput),
    outputPrecommitment: precommitmentOf({ ownerPublicKey: keys.notePublicKey, blinding }),
    deadline: BigInt(q.deadline),
    finalizeFee: BigInt(q.fees.finalize),
    quoteId: `0x${q.quoteId.slice(3)}` as Hex,
    finalizer: q.relayer as Address,
  };
  const { transaction } = await pool.prove({
    tree: state.tree, keys, inputs: [input], outputs: [],
    extAmount: -amountIn, fee, recipient: change.recipient ?? adapterOf(q.route), relayer: stack.relayer.address, action,
  });
  return { transaction, action, keys, blinding, request: { ...toRelayRequest(stack.manifest, transaction), action: { ...stringify(action), quoteId: q.quoteId } } };
}

const adapterOf = (id: string) => (stack.manifest.routes.find((r): r is ExternalActionRoute => r.action === "external" && r.id === id) as ExternalActionRoute).adapter.address as Address;
const finalize = (reservationId: string, key?: string) =>
  fetch(`${stack.queueUrl}/api/queue/finalize`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { "idempotency-key": key } : {}) },
    body: JSON.stringify({ deployment: deployment(), reservationId }),
  });
const problemOf = async (response: Response) => ({ status: response.status, ...((await response.json()) as { code: string }) });
const reservationAbi = parseAbi(["function reservations(bytes32) view returns (bytes32, address, uint256, address, uint256, uint256, uint64, uint256, uint256, address, uint8)"]);

const stringify = (a: Record<string, unknown>) => Object.fromEntries(Object.entries(a).map(([k, v]) => [k, typeof v === "bigint" ? v.toString() : v])) as Record<string, string>;

describe("an external action through the queue", () => {
  it("quote -> action with the quote's terms -> confirmed; the status names the Pool's reservation, settled by the swap", async () => {
    const q = await quoteFor(stack, pool.usdc("30"));
    const { request } = await proveAction(q);
    const accepted = await post(stack, "/api/queue/withdraw-relay", request);
    expect(accepted.status).toBe(202);
    const op = (await accepted.json()) as { id: string; action: { quoteId: string; reservationId: Hex } };
    expect(op.action.quoteId).toBe(q.quoteId);
    const client = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
    const done = await client.waitFor("withdraw", op.id);
    expect(done.state).toBe("confirmed");
    const reservation = await pool.user(0).public.readContract({ address: stack.manifest.poolAddress, abi: reservationAbi, functionName: "reservations", args: [op.action.reservationId] });
    expect(reservation[8]).toBe(BigInt(q.expectedOutput)); // amountOut: the quoted output, at the unchanged price
    expect(reservation[10]).toBe(2); // Settled

    // Finalize through the queue: the output note for the action's precommitment, the fee to the relayer.
    const feesBefore = await pool.user(0).public.readContract({ address: weth, abi: parseAbi(["function balanceOf(address) view returns (uint256)"]), functionName: "balanceOf", args: [stack.relayer.address] });
    const submitted = await finalize(op.action.reservationId, "finalize-1");
    expect(submitted.status).toBe(202);
    expect(submitted.headers.get("location")).toMatch(/^\/api\/queue\/withdraw-status\?id=op_/);
    const fin = (await submitted.json()) as { id: string; kind: string; finalize: { reservationId: string } };
    expect(fin).toMatchObject({ kind: "finalize", finalize: { reservationId: op.action.reservationId } });
    // The same key answers the same operation.
    expect(((await (await finalize(op.action.reservationId, "finalize-1")).json()) as { id: string }).id).toBe(fin.id);
    expect((await client.waitFor("withdraw", fin.id)).state).toBe("confirmed");
    const after = await pool.user(0).public.readContract({ address: stack.manifest.poolAddress, abi: reservationAbi, functionName: "reservations", args: [op.action.reservationId] });
    expect(after[10]).toBe(4); // Finalized
    const feesAfter = await pool.user(0).public.readContract({ address: weth, abi: parseAbi(["function balanceOf(address) view returns (uint256)"]), functionName: "balanceOf", args: [stack.relayer.address] });
    expect(feesAfter - feesBefore).toBe(BigInt(q.fees.finalize));
    expect(await problemOf(await finalize(op.action.reservationId))).toMatchObject({ status: 409, code: "already_finalized" });
  });

  it("finalize: an async action is not settled before its fill (409), an unknown reservation is 404, another deployment 422", async () => {
    const q = await quoteFor(stack, pool.usdc("30"), ACTION_ROUTES.fill);
    const { request } = await proveAction(q);
    const accepted = (await (await post(stack, "/api/queue/withdraw-relay", request)).json()) as { id: string; action: { reservationId: Hex } };
    const client = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
    expect((await client.waitFor("withdraw", accepted.id)).state).toBe("confirmed");
    const early = await finalize(accepted.action.reservationId);
    expect(early.headers.get("retry-after")).toBeTruthy();
    expect(await problemOf(early)).toMatchObject({ status: 409, code: "reservation_not_settled" });
    expect(await problemOf(await finalize(`0x${"12".repeat(32)}`))).toMatchObject({ status: 404, code: "reservation_not_found" });
    const other = await fetch(`${stack.queueUrl}/api/queue/finalize`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ deployment: { ...deployment(), domain: `0x${"11".repeat(32)}` }, reservationId: accepted.action.reservationId }) });
    expect(await problemOf(other)).toMatchObject({ status: 422, code: "deployment_mismatch" });
    expect(await problemOf(await finalize("0x12"))).toMatchObject({ status: 400, code: "invalid_request" });
  });

  it("refuses terms other than the quote's, a fee below it, an unknown quote and an expired one", async () => {
    const q = await quoteFor(stack, pool.usdc("30"));
    const refusal = async (request: unknown, s = stack) => {
      const response = await post(s, "/api/queue/withdraw-relay", request);
      return { status: response.status, ...((await response.json()) as { code: string; field?: string }) };
    };
    expect(await refusal((await proveAction(q, { minOutput: BigInt(q.minOutput) - 1n })).request)).toMatchObject({ status: 422, code: "quote_mismatch", field: "action.minOutput" });
    expect(await refusal((await proveAction(q, { recipient: "0x000000000000000000000000000000000000c0de" })).request)).toMatchObject({ status: 422, code: "quote_mismatch", field: "extData.recipient" });
    expect(await refusal((await proveAction(q, { fee: BigInt(q.fees.action) - 1n })).request)).toMatchObject({ status: 422, code: "fee_too_low" });
    const unknown = await proveAction({ ...q, quoteId: `qt_${"ab".repeat(32)}` });
    expect(await refusal(unknown.request)).toMatchObject({ status: 422, code: "quote_mismatch" });
    // A runtime whose quotes expire at once.
    const hasty = await startDevStack({ runtime: { quotes: { validForSeconds: 1 } } });
    try {
      const short = await quoteFor(hasty, pool.usdc("30"));
      await new Promise((r) => setTimeout(r, 2_100));
      const late = await proveAction(short);
      expect(await refusal(late.request, hasty)).toMatchObject({ status: 422, code: "quote_expired" });
    } finally {
      await hasty.stop();
    }
    expect(parseUnits("1", 6)).toBe(1_000_000n);
  });

  it("a quote admits one action: a second one citing it is 409 quote_used naming the first; an action that failed before broadcast releases it", async () => {
    const client = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
    const dev = (body: unknown) => post(stack, "/api/dev/relayer", body);
    const q = await quoteFor(stack, pool.usdc("30"));
    const [first, second, third] = [await proveAction(q), await proveAction(q), await proveAction(q)];

    // The engine held: the first action is accepted, not yet sent.
    expect((await dev({ engine: "paused" })).status).toBe(200);
    const accepted = await post(stack, "/api/queue/withdraw-relay", first.request);
    expect(accepted.status).toBe(202);
    const op = (await accepted.json()) as { id: string };
    // Another note, another proof, the same quote: refused, naming the operation that used it.
    expect(await problemOf(await post(stack, "/api/queue/withdraw-relay", second.request))).toMatchObject({ status: 409, code: "quote_used", quoteId: q.quoteId, operationId: op.id });

    // The first fails before anything is signed: its input is spent meanwhile by the same transaction,
    // sent by the relayer key itself (so the engine's fresh checks, after the pause, refuse it).
    expect((await dev({ engine: "paused" })).status).toBe(200); // a second pause forgets the admission's checks: read again
    const relayerWallet = createWalletClient({ account: privateKeyToAccount(RELAYER_KEY), transport: http(stack.rpcUrl) });
    const poolAbi = (await loadFixtures()).contracts.Pool.abi as Abi;
    const hash = await relayerWallet.writeContract({ chain: null, address: stack.manifest.poolAddress, abi: poolAbi, functionName: "transactAction", args: [first.transaction.proof, first.transaction.publicInputs, first.transaction.extData, first.action], gas: GAS } as never);
    expect((await pool.user(0).public.waitForTransactionReceipt({ hash })).status).toBe("success");
    expect((await dev({ engine: "running" })).status).toBe(200);
    const failed = await client.waitFor("withdraw", op.id);
    expect(failed).toMatchObject({ state: "rejected", transactions: [] });

    // Released: the next action citing it is accepted and confirmed; then it is used again.
    const retried = await post(stack, "/api/queue/withdraw-relay", second.request);
    expect(retried.status).toBe(202);
    const retriedOp = (await retried.json()) as { id: string };
    expect((await client.waitFor("withdraw", retriedOp.id)).state).toBe("confirmed");
    expect(await problemOf(await post(stack, "/api/queue/withdraw-relay", third.request))).toMatchObject({ status: 409, code: "quote_used", operationId: retriedOp.id });
  });
});

// Issue 25, item 1: a route's kind is the Pool's (registered at approval); the manifest must say the
// same, and a synchronous action is never relayed when its simulation would leave it Pending.
describe("route kinds", () => {
  const approveAbi = parseAbi(["function approveRoute(bytes32 routeId, address adapter, uint8 kind)"]);
  let swapCodeBefore: Hex | undefined;
  /**
   * The swap route re-approved by the Pool's owner (dev account 0, the deployer) as this kind. The Pool
   * approves only the kind an adapter says (issue 30, item 19): for async, the swap adapter's address is
   * given the fill adapter's code first (an asynchronous adapter there, as the manifest does not know);
   * for sync, its own code back.
   */
  const approveSwapAs = async (kind: number) => {
    const { wallet, public: client } = pool.user(0);
    const swapCode = (swapCodeBefore ??= (await client.getCode({ address: adapterOf(ACTION_ROUTES.swap) })) as Hex);
    const code = kind === ROUTE_KIND.async ? ((await client.getCode({ address: adapterOf(ACTION_ROUTES.fill) })) as Hex) : swapCode;
    await rpc(stack.rpcUrl, "anvil_setCode", [adapterOf(ACTION_ROUTES.swap), code]);
    const hash = await wallet.writeContract({ address: stack.manifest.poolAddress, abi: approveAbi, functionName: "approveRoute", args: [ACTION_ROUTES.swap, adapterOf(ACTION_ROUTES.swap), kind] });
    expect((await client.waitForTransactionReceipt({ hash })).status).toBe("success");
  };
  const verify = (config: DeploymentConfig) => verifyDeployment(pool.user(0).public as never, config);

  it("a manifest whose route kind differs from Pool.routes(id) is refused, naming the route and the kind", async () => {
    await expect(verify(stack.manifest)).resolves.toBeUndefined();
    const flipped = { ...stack.manifest, routes: stack.manifest.routes.map((r) => (r.action === "external" && r.id === ACTION_ROUTES.swap ? { ...r, kind: "async" as const } : r)) };
    await expect(verify(flipped)).rejects.toThrow(/route swap .* as a async route/);
  });

  it("a sync route the Pool's owner re-approved as async after start: the action would stay Pending, so it is 422 simulation_failed, not relayed", async () => {
    const q = await quoteFor(stack, pool.usdc("30"));
    const { request } = await proveAction(q);
    await approveSwapAs(ROUTE_KIND.async);
    try {
      // The manifest the runtime serves now contradicts the chain (a restart would refuse it).
      await expect(verify(stack.manifest)).rejects.toThrow(/as a sync route/);
      const refused = await post(stack, "/api/queue/withdraw-relay", request);
      expect(await problemOf(refused)).toMatchObject({ status: 422, code: "simulation_failed", reservationState: "pending" });
    } finally {
      await approveSwapAs(ROUTE_KIND.sync);
    }
    // Approved as sync again: the same request is relayed and settles (the refusal was the kind's).
    const accepted = await post(stack, "/api/queue/withdraw-relay", request);
    expect(accepted.status).toBe(202);
    const client = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
    expect((await client.waitFor("withdraw", ((await accepted.json()) as { id: string }).id)).state).toBe("confirmed");
  });

  it("a sync action accepted, then its route re-approved as async before it is sent: the engine's re-check before signing rejects it, nothing sent", async () => {
    const client = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
    const dev = (body: unknown) => post(stack, "/api/dev/relayer", body);
    const { request } = await proveAction(await quoteFor(stack, pool.usdc("30")));
    expect((await dev({ engine: "paused" })).status).toBe(200);
    try {
      const accepted = await post(stack, "/api/queue/withdraw-relay", request);
      expect(accepted.status).toBe(202);
      const op = (await accepted.json()) as { id: string };
      expect((await dev({ engine: "paused" })).status).toBe(200); // a second pause forgets the admission's checks: read again
      await approveSwapAs(ROUTE_KIND.async);
      try {
        expect((await dev({ engine: "running" })).status).toBe(200);
        expect(await client.waitFor("withdraw", op.id)).toMatchObject({ state: "rejected", transactions: [], reason: { code: "simulation_failed", detail: expect.stringContaining("leave its reservation pending") } });
      } finally {
        await approveSwapAs(ROUTE_KIND.sync);
      }
    } finally {
      await dev({ engine: "running" });
    }
  });
});
