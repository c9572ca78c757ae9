import { describe, expect, it } from "vitest";
import { erc20Abi, keccak256, parseAbi, parseUnits, toHex, zeroAddress, type Address, type Hex } from "viem";
import { ACTION_ROUTES, DEFAULT_SWAP_PRICES, type DevStack } from "../harness/index.ts";
import {
  createAccountKeys,
  createQueueClient,
  finalizedNote,
  finalizeReservation,
  FINALIZE_GAS,
  poolAbi,
  precommitmentOf,
  prepareAction,
  randomFieldElement,
  readReservation,
  reviewedFrom,
  type ActionTerms,
  QueueProblemError,
  type QueueClient,
} from "../harness/client/index.ts";
import { FINALIZE_WINDOW_MARGIN_SECONDS } from "../src/admission/finalize-checks.ts";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { CIRCUIT_BUILD_DIR } from "../harness/deployment/index.ts";
import type { DeploymentConfig } from "../src/config/deployment-config.ts";
import { buildQueueRuntime } from "../src/server.ts";
import { RELAYER_KEY, revertName } from "./support/chain.ts";
import { GAS, type poolFixture } from "./support/pool.ts";
import { rpc } from "./support/rpc.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// Issue 25, item 3: POST /finalize relays a finalize only when it is paid for: a settled reservation's
// fee covers the configured finalize fee; a refund (no fee) only of an action this runtime relayed,
// whose fee covered it. Otherwise 422 fee_too_low, and the owner finalizes it from its own account.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let queue: QueueClient;
let weth: Address;

withQueueStack({}, async (started) => {
  ({ stack, pool, queue } = started);
  weth = stack.manifest.assets.find((a) => a.decimals === 18)?.address as Address;
});

const feesOf = (asset: Address) => stack.manifest.relayFees.actions.find((f) => f.route === ACTION_ROUTES.swap && f.asset === asset) as DeploymentConfig["relayFees"]["actions"][number];
const configured = (asset: Address) => BigInt(feesOf(asset).finalize);
/** What an action must pay for its refund to be relayed too: the route's action and finalize fees in the input asset. */
const refundFee = () => BigInt(feesOf(pool.asset).action) + BigInt(feesOf(pool.asset).finalize);
const balanceOf = (asset: Address, who: Address) => pool.user(0).public.readContract({ address: asset, abi: erc20Abi, functionName: "balanceOf", args: [who] });
const postFinalize = async (reservationId: Hex, baseUrl = stack.queueUrl) => {
  const response = await fetch(`${baseUrl}/api/queue/finalize`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ deployment: { chainId: stack.manifest.chainId, poolAddress: stack.manifest.poolAddress, domain: stack.manifest.domain }, reservationId }),
  });
  return { status: response.status, body: (await response.json()) as { code?: string; fee?: string; minimumFee?: string; detail?: string; id?: string } };
};

/** A swap sent straight to the Pool by the note's owner (no quote, no relayer: fee 0), with these terms; its reservation id. */
async function directSwap(change: Partial<ActionTerms>) {
  const keys = createAccountKeys();
  const amountIn = pool.usdc("30");
  const { state, input } = await pool.fundedNote(2, keys, amountIn);
  const blinding = randomFieldElement();
  const adapter = stack.manifest.routes.find((r) => r.action === "external" && r.id === ACTION_ROUTES.swap) as { adapter: { address: Address } };
  const terms: ActionTerms = {
    routeId: ACTION_ROUTES.swap, outputAsset: weth, minOutput: parseUnits("0.0099", 18),
    outputPrecommitment: precommitmentOf({ ownerPublicKey: keys.notePublicKey, blinding }),
    deadline: BigInt(Math.floor(Date.now() / 1000) + 600), finalizeFee: 0n, quoteId: keccak256(toHex(randomFieldElement())), finalizer: zeroAddress,
    ...change,
  };
  const { transaction } = await pool.prove({ tree: state.tree, keys, inputs: [input], outputs: [], extAmount: -amountIn, recipient: adapter.adapter.address, action: terms });
  const { wallet, public: client } = pool.user(2);
  const hash = await wallet.writeContract({ address: stack.manifest.poolAddress, abi: poolAbi, functionName: "transactAction", args: [transaction.proof, transaction.publicInputs, transaction.extData, terms], gas: GAS });
  const receipt = await client.waitForTransactionReceipt({ hash });
  // ActionReserved(bytes32 indexed reservationId, …): not in the runtime's ABI, read by its topic.
  const reserved = receipt.logs.find((log) => log.topics[0] === keccak256(toHex("ActionReserved(bytes32,bytes32,bytes32,address,uint256,address)")));
  return { reservationId: reserved?.topics[1] as Hex, keys, blinding, amountIn };
}

/** Sets the swap's dUSDC -> dWETH price (dev account 0 is the adapters' price setter); the transaction's hash. */
const setSwapPrice = (price: bigint, fees: { maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint } = {}) => {
  const swap = (stack.manifest.routes.find((r) => r.action === "external" && r.id === ACTION_ROUTES.swap) as { adapter: { address: Address } }).adapter.address;
  const abi = parseAbi(["function setPrice(address assetIn, address assetOut, uint256 price)"]);
  return pool.user(0).wallet.writeContract({ address: swap, abi, functionName: "setPrice", args: [pool.asset, weth, price], ...fees });
};
const setPrice = async (price: bigint) => void (await pool.user(0).public.waitForTransactionReceipt({ hash: await setSwapPrice(price) }));

/** A swap quoted by this runtime, proven with this relay fee (default: enough for its refund to be relayed too). */
async function provenSwap(through: QueueClient = queue, fee = refundFee()) {
  const config = await through.beforePrepare();
  const quote = await through.quote(config, { route: ACTION_ROUTES.swap, assetIn: pool.asset, assetOut: weth, amountIn: pool.usdc("30") });
  const keys = createAccountKeys();
  const { state, input } = await pool.fundedNote(2, keys, pool.usdc("31"));
  return { config, quote, keys, prepared: await prepareAction({ config, quote, prover: pool.prover, tree: state.tree, keys, inputs: [input], fee }) };
}

/**
 * A swap quoted and relayed by this runtime (its fee paid) whose output fell below the quote's minimum:
 * Failed. Its admission simulates it settled (an action simulated Failed is refused); the price halves
 * in the block that mines it, ahead of it (a higher tip).
 */
async function relayedFailedSwap(through: QueueClient = queue, fee = refundFee()) {
  const { config, keys, prepared } = await provenSwap(through, fee);
  await rpc(stack.rpcUrl, "evm_setAutomine", [false]);
  let id: string;
  try {
    id = (await through.submitAction(config, prepared)).id;
    // Stored, then broadcast: wait until the node holds it, so the next block mines it.
    let hash: Hex | undefined;
    while (!hash || (await pool.user(0).public.getTransaction({ hash }).catch(() => null)) === null) {
      await new Promise((r) => setTimeout(r, 50));
      hash = (await through.status("withdraw", id)).transactions[0]?.hash as Hex | undefined;
    }
    await setSwapPrice(DEFAULT_SWAP_PRICES.usdcToWeth / 2n, { maxFeePerGas: 200_000_000_000n, maxPriorityFeePerGas: 100_000_000_000n });
    await rpc(stack.rpcUrl, "evm_mine", []);
  } finally {
    await rpc(stack.rpcUrl, "evm_setAutomine", [true]);
  }
  await setPrice(DEFAULT_SWAP_PRICES.usdcToWeth);
  const acted = await through.waitFor("withdraw", id);
  expect(acted.state).toBe("confirmed");
  const reservationId = acted.action?.reservationId as Hex;
  expect((await readReservation(pool.user(0).public, stack.manifest.poolAddress, reservationId)).state).toBe("failed");
  return { reservationId, keys, output: prepared.output, fee: BigInt(prepared.transaction.extData.fee) };
}

describe("POST /finalize is relayed only when paid for", () => {
  it("a settled reservation whose finalize fee is below the configured one: 422 fee_too_low naming both; its owner finalizes it; one that pays it is relayed", async () => {
    const unpaid = await directSwap({ finalizeFee: 0n });
    const refused = await postFinalize(unpaid.reservationId);
    expect(refused).toMatchObject({ status: 422, body: { code: "fee_too_low", fee: "0", minimumFee: configured(weth).toString() } });
    // A fee of 0 is nobody's: no wait for the owner.
    expect(refused.body).not.toHaveProperty("finalizableByOwnerAt");
    expect(refused.body.detail).toContain("its owner can finalize it now");
    // The owner's way: Pool.finalize from its own account (a fee of 0: nobody's to take).
    const { wallet, public: client } = pool.user(2);
    await finalizeReservation({ wallet, client, pool: stack.manifest.poolAddress, reservationId: unpaid.reservationId });
    const { note, refunded } = await finalizedNote({ client, pool: stack.manifest.poolAddress, reservationId: unpaid.reservationId, keys: unpaid.keys, output: { blinding: unpaid.blinding, precommitment: 0n, asset: weth, refundAsset: pool.asset } });
    expect({ refunded, asset: note.asset }).toEqual({ refunded: false, asset: weth });

    // Not relayed by this runtime, but paying the configured fee to it: relayed, the fee to the relayer.
    const paid = await directSwap({ finalizeFee: configured(weth), finalizer: stack.relayer.address });
    const before = await balanceOf(weth, stack.relayer.address);
    const accepted = await postFinalize(paid.reservationId);
    expect(accepted.status).toBe(202);
    expect((await queue.waitFor("withdraw", accepted.body.id as string)).state).toBe("confirmed");
    expect((await balanceOf(weth, stack.relayer.address)) - before).toBe(configured(weth));
  });

  it("a settled reservation paying the configured fee to another relayer (its finalizer): 422 simulation_failed naming FinalizerOnly, nothing sent", async () => {
    const other = pool.user(3).wallet.account.address;
    const { reservationId } = await directSwap({ finalizeFee: configured(weth), finalizer: other });
    const refused = await postFinalize(reservationId);
    expect(refused).toMatchObject({ status: 422, body: { code: "simulation_failed", revert: { name: "FinalizerOnly" } } });
    // FinalizerOnly(reservationId, finalizer, until): the relayer that may finalize it is named.
    expect((refused.body as { revert?: { args: string[] } }).revert?.args[1]?.toLowerCase()).toBe(other.toLowerCase());
  });

  it("a refund: 422 fee_too_low for an action this runtime did not relay; relayed for one it did, whose fee covered the action and the refund", async () => {
    const direct = await directSwap({ minOutput: parseUnits("1", 18) }); // the swap pays less: Failed
    expect(await postFinalize(direct.reservationId)).toMatchObject({ status: 422, body: { code: "fee_too_low", fee: "0", minimumFee: refundFee().toString() } });

    // Relayed here with the quoted fee, then the swap paid less than the quote's minimum: Failed, refunded through the queue.
    const { reservationId, keys, output } = await relayedFailedSwap();
    const accepted = await postFinalize(reservationId);
    expect(accepted.status).toBe(202);
    expect((await queue.waitFor("withdraw", accepted.body.id as string)).state).toBe("confirmed");
    const refund = await finalizedNote({ client: pool.user(0).public, pool: stack.manifest.poolAddress, reservationId, keys, output });
    expect(refund).toMatchObject({ refunded: true, note: { asset: pool.asset, amount: pool.usdc("30") } });
  });

  it("a refund of an action this runtime relayed is found in its own store, not in the chain's logs: relayed while eth_getLogs fails (a range-limited provider)", async () => {
    const { reservationId } = await relayedFailedSwap();
    // What a provider that limits eth_getLogs' range answers a scan from the deployment block: an error, every time.
    stack.faults.rpc({ kind: "fail", methods: ["eth_getLogs"] });
    try {
      const accepted = await postFinalize(reservationId);
      expect(accepted).toMatchObject({ status: 202 });
      expect((await queue.waitFor("withdraw", accepted.body.id as string)).state).toBe("confirmed");
    } finally {
      stack.faults.rpc(null);
    }
  });

  it("a refund of an action this runtime relayed whose fee is below the finalize fee now (the operator raised it): 422 fee_too_low naming both, also when eth_getLogs fails", async () => {
    // A runtime of the same relayer whose finalize fee in dUSDC (the swap's input) is above the action fee it charges.
    const manifest = JSON.parse((await readFile(stack.manifestPath)).toString("utf8")) as DeploymentConfig;
    const entry = manifest.relayFees.actions.find((f) => f.route === ACTION_ROUTES.swap && f.asset === pool.asset) as DeploymentConfig["relayFees"]["actions"][number];
    entry.finalize = (BigInt(entry.action) * 2n).toString();
    const minimum = BigInt(entry.action) + BigInt(entry.finalize);
    const app = await buildQueueRuntime({ manifest: Buffer.from(JSON.stringify(manifest)), rpcUrl: stack.faults.rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR, store: ":memory:", rateLimit: false });
    try {
      const url = await app.listen({ host: "127.0.0.1", port: 0 });
      const raised = createQueueClient({ baseUrl: url, reviewed: reviewedFrom(manifest) });
      const { reservationId, fee } = await relayedFailedSwap(raised);
      expect(fee).toBeLessThan(minimum);
      // Through a provider that refuses eth_getLogs, as the test above: the store says what the action paid.
      stack.faults.rpc({ kind: "fail", methods: ["eth_getLogs"] });
      const refused = await postFinalize(reservationId, url).finally(() => stack.faults.rpc(null));
      expect(refused).toMatchObject({ status: 422, body: { code: "fee_too_low", fee: fee.toString(), minimumFee: minimum.toString() } });
      expect(refused.body.detail).toContain(`its action paid a fee of ${fee}`);
    } finally {
      await app.close();
    }
  });

  it("a relayed refund that loses the race to the owner's own finalize ends reverted, with AlreadyFinalized by name", async () => {
    const { reservationId } = await relayedFailedSwap();
    const owner = pool.user(2);
    // The owner's finalize waits in the mempool (a high tip) when the relayer is asked for one: both are mined in one block, the owner's first.
    await rpc(stack.rpcUrl, "evm_setAutomine", [false]);
    let id: string;
    try {
      const ownHash = await owner.wallet.writeContract({ address: stack.manifest.poolAddress, abi: poolAbi, functionName: "finalize", args: [reservationId], gas: FINALIZE_GAS, maxFeePerGas: 200_000_000_000n, maxPriorityFeePerGas: 100_000_000_000n });
      const accepted = await postFinalize(reservationId);
      expect(accepted.status).toBe(202);
      id = accepted.body.id as string;
      while ((await queue.status("withdraw", id)).transactions.length === 0) await new Promise((r) => setTimeout(r, 50));
      await rpc(stack.rpcUrl, "evm_mine", []);
      expect((await owner.public.waitForTransactionReceipt({ hash: ownHash })).status).toBe("success");
    } finally {
      await rpc(stack.rpcUrl, "evm_setAutomine", [true]);
    }
    const lost = await queue.waitFor("withdraw", id);
    expect(lost).toMatchObject({ state: "reverted", reason: { code: "reverted", revert: { name: "AlreadyFinalized" } } });
    // The reason says it was a lost race, not a fault of the request.
    expect(lost.reason?.detail).toContain("another finalize of this reservation was mined first");
  });
  // Issue 30, item 17: a refund costs the relayer a second transaction (about 1.0M gas) beyond the action.
  it("a refund of an action this runtime relayed whose fee paid the action alone (at least a finalize fee, as before): 422 fee_too_low naming the fee and action + finalize", async () => {
    const actionOnly = BigInt(feesOf(pool.asset).action);
    expect(actionOnly).toBeGreaterThanOrEqual(configured(pool.asset));
    const { reservationId } = await relayedFailedSwap(queue, actionOnly);
    const refused = await postFinalize(reservationId);
    expect(refused).toMatchObject({ status: 422, body: { code: "fee_too_low", fee: actionOnly.toString(), minimumFee: refundFee().toString() } });
  });

  it("a swap its admission simulates Failed (the price fell below its minimum): 422 simulation_failed with the simulated output, nothing relayed; relayed once the price is back", async () => {
    const { config, quote, prepared } = await provenSwap();
    await setPrice(DEFAULT_SWAP_PRICES.usdcToWeth / 2n);
    const refused = await queue.submitAction(config, prepared).catch((error: unknown) => error).finally(() => setPrice(DEFAULT_SWAP_PRICES.usdcToWeth));
    expect(refused).toBeInstanceOf(QueueProblemError);
    const expectedOutput = (pool.usdc("30") * (DEFAULT_SWAP_PRICES.usdcToWeth / 2n)) / 10n ** 18n;
    expect((refused as QueueProblemError).problem).toMatchObject({ status: 422, code: "simulation_failed", reservationState: "failed", minOutput: quote.minOutput, expectedOutput: expectedOutput.toString() });
    expect((await queue.waitFor("withdraw", (await queue.submitAction(config, prepared)).id)).state).toBe("confirmed");
  });

  // Issue 30, item 16: the fee a reservation carries for this relayer was its own quote. Issue 40, item 7:
  // only when it was (this runtime relayed the action or quoted its terms), also after a restart from its store.
  it("a reservation naming this relayer is finalized by it at the fee it carries when this runtime relayed its action or quoted its terms, also after a restart from its store with a higher finalize fee", async () => {
    const fee = configured(weth);
    const dir = await mkdtemp(path.join(tmpdir(), "finalize-fee-"));
    const store = path.join(dir, "queue.sqlite");
    const manifest = JSON.parse((await readFile(stack.manifestPath)).toString("utf8")) as DeploymentConfig;
    const runtime = (config: DeploymentConfig) => buildQueueRuntime({ manifest: Buffer.from(JSON.stringify(config)), rpcUrl: stack.rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR, store, rateLimit: false });
    try {
      // The first runtime relays one swap, and quotes another that its owner sends to the Pool itself.
      const first = await runtime(manifest);
      let relayed: Hex;
      let quoted: Hex;
      try {
        const through = createQueueClient({ baseUrl: await first.listen({ host: "127.0.0.1", port: 0 }), reviewed: reviewedFrom(manifest) });
        const { config, prepared } = await provenSwap(through);
        const acted = await through.waitFor("withdraw", (await through.submitAction(config, prepared)).id);
        expect(acted.state).toBe("confirmed");
        relayed = acted.action?.reservationId as Hex;
        const quote = await through.quote(config, { route: ACTION_ROUTES.swap, assetIn: pool.asset, assetOut: weth, amountIn: pool.usdc("30") });
        quoted = (await directSwap({ minOutput: BigInt(quote.minOutput), deadline: BigInt(quote.deadline), finalizeFee: BigInt(quote.fees.finalize), finalizer: quote.relayer as Address, quoteId: `0x${quote.quoteId.slice(3)}` })).reservationId;
      } finally {
        await first.close();
      }
      // The same relayer key and store, started again with ten times the finalize fee in dWETH.
      const entry = manifest.relayFees.actions.find((f) => f.route === ACTION_ROUTES.swap && f.asset === weth) as DeploymentConfig["relayFees"]["actions"][number];
      entry.finalize = (fee * 10n).toString();
      const second = await runtime(manifest);
      try {
        const url = await second.listen({ host: "127.0.0.1", port: 0 });
        const raised = createQueueClient({ baseUrl: url, reviewed: reviewedFrom(manifest) });
        for (const reservationId of [relayed, quoted]) {
          const before = await balanceOf(weth, stack.relayer.address);
          const accepted = await postFinalize(reservationId, url);
          expect(accepted.status).toBe(202);
          expect((await raised.waitFor("withdraw", accepted.body.id as string)).state).toBe("confirmed");
          expect((await balanceOf(weth, stack.relayer.address)) - before).toBe(fee);
        }
      } finally {
        await second.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  // Issue 40, item 7: the Pool lets a self-relayed action name any finalizer, this relayer too, at any fee.
  it("a self-relayed action naming this relayer its finalizer with a fee it never quoted (1 wei): 422 fee_too_low, priced by the schedule (at the configured fee it is relayed: the first test)", async () => {
    const { reservationId } = await directSwap({ finalizeFee: 1n, minOutput: 1n, finalizer: stack.relayer.address });
    const { deadline } = await readReservation(pool.user(0).public, stack.manifest.poolAddress, reservationId);
    const refused = await postFinalize(reservationId);
    expect(refused).toMatchObject({ status: 422, body: { code: "fee_too_low", fee: "1", minimumFee: configured(weth).toString(), finalizer: stack.relayer.address, finalizableByOwnerAt: (deadline + 3600n + 1n).toString() } });
    expect(refused.body.detail).toContain("neither relayed its action nor quoted its terms");
  });

  // Issue 30, item 18: a fee anyone may take is one a copy of the relayer's finalize, mined first, takes.
  it("a fee anyone may take (finalizer 0x0) is answered as a fee of 0: 422 fee_too_low, its owner finalizes it now and is paid the fee", async () => {
    const { reservationId } = await directSwap({ finalizeFee: configured(weth), finalizer: zeroAddress });
    const refused = await postFinalize(reservationId);
    expect(refused).toMatchObject({ status: 422, body: { code: "fee_too_low", fee: "0", minimumFee: configured(weth).toString() } });
    expect(refused.body).not.toHaveProperty("finalizableByOwnerAt");
    expect(refused.body.detail).toContain("anyone may take (its finalizer is 0x0)");
    expect(refused.body.detail).toContain("its owner can finalize it now");
  });

  it("this relayer's own fee: refused as its window closes (finalizableByOwnerAt: deadline + FINALIZE_GRACE + 1), and as a fee of 0 once it has closed; the owner's finalize then succeeds, paid the fee", async () => {
    // Last in the file: it moves the chain's clock past the grace.
    const fee = configured(weth);
    const { reservationId } = await directSwap({ finalizeFee: fee, finalizer: stack.relayer.address });
    const { public: client, wallet } = pool.user(2);
    const { deadline } = await readReservation(client, stack.manifest.poolAddress, reservationId);
    const until = deadline + 3600n;
    // Inside the window, but within FINALIZE_WINDOW_MARGIN_SECONDS of its end: a finalize sent now might be mined after it.
    await rpc(stack.rpcUrl, "evm_mine", [Number(until - FINALIZE_WINDOW_MARGIN_SECONDS + 60n)]);
    const closing = await postFinalize(reservationId);
    expect(closing).toMatchObject({ status: 422, body: { code: "fee_too_low", fee: fee.toString(), finalizer: stack.relayer.address, finalizableByOwnerAt: (until + 1n).toString() } });
    expect(closing.body.detail).toContain(`from ${new Date(Number(until + 1n) * 1000).toISOString()}`);
    // The owner's finalize still reverts FinalizerOnly, as the answer says.
    const own = () => finalizeReservation({ wallet, client, pool: stack.manifest.poolAddress, reservationId });
    expect(revertName(await own().catch((error: unknown) => error))).toBe("FinalizerOnly");

    await rpc(stack.rpcUrl, "evm_mine", [Number(until + 1n)]);
    const closed = await postFinalize(reservationId);
    expect(closed).toMatchObject({ status: 422, body: { code: "fee_too_low", fee: "0" } });
    expect(closed.body).not.toHaveProperty("finalizableByOwnerAt");
    expect(closed.body.detail).toContain("its owner can finalize it now");
    const before = await balanceOf(weth, wallet.account.address);
    await own();
    expect((await balanceOf(weth, wallet.account.address)) - before).toBe(fee);
  });
});
