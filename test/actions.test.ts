import { describe, expect, it } from "vitest";
import { BaseError, ContractFunctionRevertedError, decodeEventLog, keccak256, parseUnits, toHex, type Abi, type Address, type Hex, type TransactionReceipt } from "viem";
import type { DevStack } from "../harness/index.ts";
import { ACTION_ROUTES, DEFAULT_SWAP_PRICES } from "../harness/deployment/index.ts";
import { loadFixtures } from "../harness/deployment/index.ts";
import { commitmentOf, createAccountKeys, MerkleTree, precommitmentOf, randomFieldElement, syncPool, type AccountKeys, type ActionTerms, type Note, type PreparedTransaction } from "../harness/client/index.ts";
import { GAS, type poolFixture } from "./support/pool.ts";
import { hex, rpc } from "./support/rpc.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// Approved external actions on the Pool, with real proofs: an action is a withdrawal to a route's
// adapter whose terms the proof binds; its output is reserved, settled (at once, or later by a filler),
// and finalized into a note only the precommitment's owner can spend, or refunded.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let abi: { pool: Abi; fill: Abi; swap: Abi };
let adapters: { swap: Address; fill: Address };
let weth: Address;

withQueueStack({}, async (started) => {
  ({ stack, pool } = started);
  const fixtures = await loadFixtures();
  // The adapters' calls can revert with the Pool's errors (a fill the Pool refuses): decode those too.
  const poolErrors = fixtures.contracts.Pool.abi.filter((item) => item.type === "error");
  abi = { pool: fixtures.contracts.Pool.abi, fill: [...fixtures.contracts.FillAdapter.abi, ...poolErrors], swap: fixtures.contracts.SwapAdapter.abi };
  const route = async (id: Hex) => ((await pool.read(stack.manifest.poolAddress, abi.pool, "routes", [id])) as [Address, Hex])[0];
  adapters = { swap: await route(ACTION_ROUTES.swap), fill: await route(ACTION_ROUTES.fill) };
  weth = stack.manifest.assets.find((a) => a.decimals === 18)?.address as Address;
});


/** Sends a contract call from dev account `from` with explicit gas; returns the receipt (reverts throw with the error's name). */
async function send(from: number, address: Address, contractAbi: Abi, functionName: string, args: unknown[]): Promise<TransactionReceipt> {
  const { wallet, public: client } = pool.user(from);
  await client.simulateContract({ account: wallet.account, address, abi: contractAbi, functionName, args, gas: GAS } as never);
  const hash = await wallet.writeContract({ address, abi: contractAbi, functionName, args, gas: GAS } as never);
  const receipt = await client.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`${functionName} reverted`);
  return receipt;
}

const events = (receipt: TransactionReceipt) =>
  receipt.logs.flatMap((log) => {
    try {
      return [decodeEventLog({ abi: abi.pool, data: log.data, topics: log.topics }) as unknown as { eventName: string; args: Record<string, unknown> }];
    } catch {
      return [];
    }
  });

interface ActionSetup {
  keys: AccountKeys;
  blinding: bigint;
  terms: ActionTerms;
  transaction: PreparedTransaction;
  amountIn: bigint;
}

/** A funded dUSDC note of fresh keys, and a proven action spending all of it through `route`. */
async function provenAction(route: keyof typeof ACTION_ROUTES, change: Partial<ActionTerms> = {}): Promise<ActionSetup> {
  const keys = createAccountKeys();
  const amountIn = pool.usdc("30");
  const { state, input } = await pool.fundedNote(2, keys, amountIn);
  const blinding = randomFieldElement();
  // Chosen client-side: Poseidon2(notePublicKey, blinding); the blinding never leaves the client.
  const outputPrecommitment = precommitmentOf({ ownerPublicKey: keys.notePublicKey, blinding });
  const terms: ActionTerms = {
    routeId: ACTION_ROUTES[route],
    outputAsset: weth,
    minOutput: parseUnits("0.0099", 18), // 30 dUSDC at 3,000 = 0.01 dWETH
    outputPrecommitment,
    deadline: (await pool.chainTime()) + 600n,
    finalizeFee: parseUnits("0.0001", 18),
    quoteId: keccak256(toHex(randomFieldElement())),
    finalizer: pool.user(4).account.address, // the account these tests finalize from
    ...change,
  };
  const { transaction } = await pool.prove({
    tree: state.tree, keys, inputs: [input], outputs: [],
    extAmount: -amountIn, recipient: adapters[route], action: terms,
  });
  return { keys, blinding, terms, transaction, amountIn };
}


const act = (from: number, setup: ActionSetup, terms = setup.terms) =>
  send(from, stack.manifest.poolAddress, abi.pool, "transactAction", [setup.transaction.proof, setup.transaction.publicInputs, setup.transaction.extData, terms]);

async function reservationOf(receipt: TransactionReceipt): Promise<Hex> {
  const reserved = events(receipt).find((e) => e.eventName === "ActionReserved");
  if (!reserved) throw new Error("no ActionReserved event");
  return reserved.args.reservationId as Hex;
}
const stateOf = async (id: Hex) => Number(((await pool.read(stack.manifest.poolAddress, abi.pool, "reservations", [id])) as unknown[])[10]);
const STATE = { None: 0, Pending: 1, Settled: 2, Failed: 3, Finalized: 4 };

describe("approved external actions", () => {
  it("a synchronous swap settles at once; finalize inserts the output note, which only its owner can spend", async () => {
    const setup = await provenAction("swap");
    const poolUsdcBefore = await pool.balanceOf(pool.asset, stack.manifest.poolAddress);
    const reservationId = await reservationOf(await act(2, setup));
    expect(await stateOf(reservationId)).toBe(STATE.Settled);
    const quoted = (await pool.read(adapters.swap, abi.swap, "quote", [pool.asset, weth, setup.amountIn])) as bigint;
    expect(quoted).toBe((setup.amountIn * DEFAULT_SWAP_PRICES.usdcToWeth) / 10n ** 18n); // 0.01 dWETH, rounded down
    // The input left the Pool for the adapter; the output came in.
    expect(poolUsdcBefore - (await pool.balanceOf(pool.asset, stack.manifest.poolAddress))).toBe(setup.amountIn);

    const finalizer = pool.user(4).account.address;
    const feeBefore = await pool.balanceOf(weth, finalizer);
    const finalized = events(await send(4, stack.manifest.poolAddress, abi.pool, "finalize", [reservationId])).find((e) => e.eventName === "ReservationFinalized");
    expect(finalized?.args).toMatchObject({ reservationId, refunded: false, asset: weth, amount: quoted - setup.terms.finalizeFee });
    expect((await pool.balanceOf(weth, finalizer)) - feeBefore).toBe(setup.terms.finalizeFee);
    const note: Note = { amount: quoted - setup.terms.finalizeFee, asset: weth, ownerPublicKey: setup.keys.notePublicKey, blinding: setup.blinding };
    expect(finalized?.args.commitment).toBe(commitmentOf(note));
    await expect(send(4, stack.manifest.poolAddress, abi.pool, "finalize", [reservationId])).rejects.toThrow(/AlreadyFinalized/);

    // The owner spends it: a withdrawal of the whole note in dWETH.
    const state = await syncPool({ client: pool.user(0).public, pool: stack.manifest.poolAddress, fromBlock: BigInt(stack.manifest.deploymentBlock), levels: pool.levels });
    const leafIndex = Number(finalized?.args.index);
    const payee = "0x000000000000000000000000000000000000a11c" as Address;
    const { transaction } = await pool.prove({
      asset: weth, tree: state.tree as MerkleTree, keys: setup.keys, inputs: [{ note, leafIndex }], outputs: [],
      extAmount: -note.amount, recipient: payee,
    });
    await send(3, stack.manifest.poolAddress, abi.pool, "transact", [transaction.proof, transaction.publicInputs, transaction.extData]);
    expect(await pool.balanceOf(weth, payee)).toBe(note.amount);
  });

  it("a swap paying less than the minimum fails in the action's own transaction, and finalize refunds the input (no fee)", async () => {
    const setup = await provenAction("swap", { minOutput: parseUnits("0.0101", 18) });
    const reservationId = await reservationOf(await act(2, setup));
    expect(await stateOf(reservationId)).toBe(STATE.Failed);
    const finalized = events(await send(4, stack.manifest.poolAddress, abi.pool, "finalize", [reservationId])).find((e) => e.eventName === "ReservationFinalized");
    expect(finalized?.args).toMatchObject({ refunded: true, asset: pool.asset, amount: setup.amountIn });
    expect(finalized?.args.commitment).toBe(commitmentOf({ amount: setup.amountIn, asset: pool.asset, ownerPublicKey: setup.keys.notePublicKey, blinding: setup.blinding }));
  });

  it("an asynchronous fill: reserved, not finalizable before the fill, settled by the filler, finalized once", async () => {
    const setup = await provenAction("fill");
    const reservationId = await reservationOf(await act(2, setup));
    expect(await stateOf(reservationId)).toBe(STATE.Pending);
    await expect(send(4, stack.manifest.poolAddress, abi.pool, "finalize", [reservationId])).rejects.toThrow(/ReservationNotSettled/);
    // Only the harness's filler (the deployer, account 0) fills; never below the minimum.
    await expect(send(3, adapters.fill, abi.fill, "fill", [reservationId, parseUnits("0.01", 18)])).rejects.toThrow(/OnlyFiller/);
    await expect(send(0, adapters.fill, abi.fill, "fill", [reservationId, parseUnits("0.001", 18)])).rejects.toThrow(/BelowMinimum/);
    await send(0, adapters.fill, abi.fill, "fill", [reservationId, parseUnits("0.012", 18)]);
    expect(await stateOf(reservationId)).toBe(STATE.Settled);
    const finalized = events(await send(4, stack.manifest.poolAddress, abi.pool, "finalize", [reservationId])).find((e) => e.eventName === "ReservationFinalized");
    expect(finalized?.args).toMatchObject({ refunded: false, asset: weth, amount: parseUnits("0.012", 18) - setup.terms.finalizeFee });
    await expect(send(4, stack.manifest.poolAddress, abi.pool, "finalize", [reservationId])).rejects.toThrow(/AlreadyFinalized/);
  });

  it("a fill that never comes: after the deadline, finalize takes the input back from the adapter and refunds it; a late fill is refused", async () => {
    const setup = await provenAction("fill", { deadline: (await pool.chainTime()) + 120n });
    const reservationId = await reservationOf(await act(2, setup));
    await rpc(stack.rpcUrl, "evm_increaseTime", [hex(121)]);
    await rpc(stack.rpcUrl, "evm_mine", []);
    await expect(send(0, adapters.fill, abi.fill, "fill", [reservationId, parseUnits("0.01", 18)])).rejects.toThrow(/ActionExpired/);
    const adapterBefore = await pool.balanceOf(pool.asset, adapters.fill);
    const finalized = events(await send(4, stack.manifest.poolAddress, abi.pool, "finalize", [reservationId])).find((e) => e.eventName === "ReservationFinalized");
    expect(finalized?.args).toMatchObject({ refunded: true, asset: pool.asset, amount: setup.amountIn });
    expect(adapterBefore - (await pool.balanceOf(pool.asset, adapters.fill))).toBe(setup.amountIn);
  });

  it("a copy of the named finalizer's finalize, mined before it, cannot take the fee (FinalizerOnly) until deadline + grace; then anyone may", async () => {
    const setup = await provenAction("swap");
    const reservationId = await reservationOf(await act(2, setup));
    const [finalizer, copier] = [pool.user(4), pool.user(3)];
    const wethOf = async () => [await pool.balanceOf(weth, finalizer.account.address), await pool.balanceOf(weth, copier.account.address)];
    const before = await wethOf();
    // The race of the issue: the copy (a higher tip) is mined first, in the same block as the finalizer's.
    await rpc(stack.rpcUrl, "evm_setAutomine", [false]);
    let hashes: Hex[];
    try {
      const call = { address: stack.manifest.poolAddress, abi: abi.pool, functionName: "finalize", args: [reservationId], gas: GAS };
      const copy = await copier.wallet.writeContract({ ...call, maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 10_000_000_000n } as never);
      const theirs = await finalizer.wallet.writeContract({ ...call, maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 1n } as never);
      hashes = [theirs, copy];
      await rpc(stack.rpcUrl, "evm_mine", []);
    } finally {
      await rpc(stack.rpcUrl, "evm_setAutomine", [true]);
    }
    const [theirs, copy] = await Promise.all(hashes.map((hash) => finalizer.public.waitForTransactionReceipt({ hash })));
    expect(copy?.transactionIndex).toBeLessThan(theirs?.transactionIndex as number);
    expect([theirs?.status, copy?.status]).toEqual(["success", "reverted"]);
    const [finalizerAfter, copierAfter] = (await wethOf()) as [bigint, bigint];
    expect(finalizerAfter - (before[0] as bigint)).toBe(setup.terms.finalizeFee);
    expect(copierAfter).toBe(before[1]);
    // The copy's reason, by name: only the named finalizer, until deadline + FINALIZE_GRACE.
    const other = await provenAction("swap");
    const otherId = await reservationOf(await act(2, other));
    const grace = (await pool.read(stack.manifest.poolAddress, abi.pool, "FINALIZE_GRACE")) as bigint;
    const refused = await send(3, stack.manifest.poolAddress, abi.pool, "finalize", [otherId]).catch((error: BaseError) => error.walk((e) => e instanceof ContractFunctionRevertedError));
    expect((refused as ContractFunctionRevertedError).data).toMatchObject({ errorName: "FinalizerOnly", args: [otherId, finalizer.account.address, other.terms.deadline + grace] });
    // Past it, the finalizer may be gone: anyone finalizes, for the fee (the output is never stuck).
    await rpc(stack.rpcUrl, "evm_increaseTime", [hex(Number(other.terms.deadline + grace - (await pool.chainTime())) + 1)]);
    await rpc(stack.rpcUrl, "evm_mine", []);
    const copierBefore = await pool.balanceOf(weth, copier.account.address);
    await send(3, stack.manifest.poolAddress, abi.pool, "finalize", [otherId]);
    expect((await pool.balanceOf(weth, copier.account.address)) - copierBefore).toBe(other.terms.finalizeFee);
  });

  it("refuses an unapproved route, changed terms, a recipient other than the adapter, an expired action and an unknown reservation", async () => {
    const setup = await provenAction("swap");
    // Every term is bound by the proof: changing any one breaks extDataHash.
    for (const change of [{ minOutput: 1n }, { outputAsset: pool.asset }, { deadline: setup.terms.deadline + 1n }, { finalizeFee: 0n }, { quoteId: keccak256("0x01") as Hex }, { outputPrecommitment: 5n }, { finalizer: pool.user(3).account.address }, { routeId: ACTION_ROUTES.fill }]) {
      const pattern = "routeId" in change ? /InvalidRecipient/ : /ExtDataHashMismatch/;
      await expect(act(2, setup, { ...setup.terms, ...change })).rejects.toThrow(pattern);
    }
    await expect(act(2, setup, { ...setup.terms, routeId: keccak256(toHex("nope")) })).rejects.toThrow(/RouteNotApproved/);
    const expired = await provenAction("swap", { deadline: (await pool.chainTime()) - 1n });
    await expect(act(2, expired)).rejects.toThrow(/ActionExpired/);
    await expect(send(4, stack.manifest.poolAddress, abi.pool, "finalize", [keccak256("0x02")])).rejects.toThrow(/ReservationUnknown/);
    // Only the owner approves routes.
    await expect(send(3, stack.manifest.poolAddress, abi.pool, "approveRoute", [keccak256("0x03"), adapters.swap, 0])).rejects.toThrow(/OnlyOwner/);
  });

  it("approves a route only of the kind its adapter says (issue 30, item 19): a sync adapter as async, or an async one as sync, is refused; a contract that says none, too", async () => {
    const kindOf = async (route: Hex) => ((await pool.read(stack.manifest.poolAddress, abi.pool, "routes", [route])) as [Address, Hex, number])[2];
    const before = { swap: await kindOf(ACTION_ROUTES.swap), fill: await kindOf(ACTION_ROUTES.fill) };
    const refusal = (adapter: Address, kind: number) =>
      send(0, stack.manifest.poolAddress, abi.pool, "approveRoute", [ACTION_ROUTES.swap, adapter, kind]).catch((error: BaseError) => error.walk((e) => e instanceof ContractFunctionRevertedError));
    expect(((await refusal(adapters.swap, 1)) as ContractFunctionRevertedError).data).toMatchObject({ errorName: "RouteKindMismatch", args: [ACTION_ROUTES.swap, 1, 0] });
    expect(((await refusal(adapters.fill, 0)) as ContractFunctionRevertedError).data).toMatchObject({ errorName: "RouteKindMismatch", args: [ACTION_ROUTES.swap, 0, 1] });
    await expect(send(0, stack.manifest.poolAddress, abi.pool, "approveRoute", [ACTION_ROUTES.swap, pool.asset, 0])).rejects.toThrow(/revert/i); // a token has no kind()
    expect({ swap: await kindOf(ACTION_ROUTES.swap), fill: await kindOf(ACTION_ROUTES.fill) }).toEqual(before);
    // The kind its adapter says is approved, as the deployment did.
    await send(0, stack.manifest.poolAddress, abi.pool, "approveRoute", [ACTION_ROUTES.swap, adapters.swap, 0]);
  });
});
