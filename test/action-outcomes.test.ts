import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeEventLog, keccak256, parseUnits, toHex, type Abi, type Address, type Hex, type TransactionReceipt } from "viem";
import type { DevStack } from "../harness/index.ts";
import { ACTION_ROUTES, ROUTE_KIND, loadFixtures } from "../harness/deployment/index.ts";
import { commitmentOf, createAccountKeys, precommitmentOf, randomFieldElement, type AccountKeys, type ActionTerms, type PreparedTransaction } from "../harness/client/index.ts";
import { GAS, type poolFixture } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { hex, rpc } from "./support/rpc.ts";

// Issue 25, item 1: whatever a route's adapter does, the user's value ends in the settled output (at
// least the minimum) or in a refund note of the input: never stuck. One chain and one proof per route
// kind: each case runs the proven action from the same snapshot (evm_snapshot/evm_revert), with the
// adapter's outcome set first; no new proof is needed, the outcome is the adapter's.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let abi: { pool: Abi; swap: Abi; fill: Abi };
let adapters: Record<keyof typeof ACTION_ROUTES, Address>;
let weth: Address;
const proven: Partial<Record<keyof typeof ACTION_ROUTES, { keys: AccountKeys; blinding: bigint; terms: ActionTerms; transaction: PreparedTransaction }>> = {};

const AMOUNT_IN = 30_000_000n; // 30 dUSDC
const MIN_OUTPUT = parseUnits("0.0099", 18);
const FINALIZE_FEE = parseUnits("0.0001", 18);
const STATE = { Pending: 1, Settled: 2, Failed: 3, Finalized: 4 } as const;
/**
 * An adapter that fails: every call reverts, but kind() answers the route's kind (0 sync, 1 async), so
 * the Pool's owner can approve it (approveRoute asks). If the selector is kind() (0x04baa00b), return
 * the kind; else PUSH1 0 PUSH1 0 REVERT.
 */
const revertingCode = (kind: number) => `0x60003560e01c6304baa00b1460145760006000fd5b60${kind.toString(16).padStart(2, "0")}60005260206000f3` as Hex;

withQueueStack({ timeout: 240_000 }, async (started) => {
  ({ stack, pool } = started);
  const fixtures = await loadFixtures();
  const poolErrors = fixtures.contracts.Pool.abi.filter((item) => item.type === "error");
  abi = { pool: fixtures.contracts.Pool.abi, swap: fixtures.contracts.SwapAdapter.abi, fill: [...fixtures.contracts.FillAdapter.abi, ...poolErrors] };
  const route = async (id: Hex) => ((await pool.read(stack.manifest.poolAddress, abi.pool, "routes", [id])) as [Address])[0];
  adapters = { swap: await route(ACTION_ROUTES.swap), fill: await route(ACTION_ROUTES.fill) };
  weth = stack.manifest.assets.find((a) => a.decimals === 18)?.address as Address;
  // Far deadlines: a case that waits out its deadline is reverted, and anvil keeps its clock going.
  const deadline = (await pool.chainTime()) + 365n * 86_400n;
  for (const kind of ["swap", "fill"] as const) {
    const keys = createAccountKeys();
    const { state, input } = await pool.fundedNote(2, keys, AMOUNT_IN);
    const blinding = randomFieldElement();
    const terms: ActionTerms = {
      routeId: ACTION_ROUTES[kind], outputAsset: weth, minOutput: MIN_OUTPUT,
      outputPrecommitment: precommitmentOf({ ownerPublicKey: keys.notePublicKey, blinding }),
      deadline, finalizeFee: FINALIZE_FEE, quoteId: keccak256(toHex(randomFieldElement())), finalizer: pool.user(4).account.address,
    };
    const { transaction } = await pool.prove({ tree: state.tree, keys, inputs: [input], outputs: [], extAmount: -AMOUNT_IN, recipient: adapters[kind], action: terms });
    proven[kind] = { keys, blinding, terms, transaction };
  }
});


/** A call from dev account `from`; the receipt, or the revert's error name. */
async function send(from: number, address: Address, contractAbi: Abi, functionName: string, args: unknown[]): Promise<TransactionReceipt | { reverted: string }> {
  const { wallet, public: client } = pool.user(from);
  try {
    await client.simulateContract({ account: wallet.account, address, abi: contractAbi, functionName, args, gas: GAS } as never);
  } catch (error) {
    return { reverted: String((error as { shortMessage?: string }).shortMessage ?? error) };
  }
  const hash = await wallet.writeContract({ address, abi: contractAbi, functionName, args, gas: GAS } as never);
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  if (receipt.status !== "success") throw new Error(`${functionName} reverted after its simulation passed`);
  return receipt;
}
async function mustSend(from: number, address: Address, contractAbi: Abi, functionName: string, args: unknown[]): Promise<TransactionReceipt> {
  const result = await send(from, address, contractAbi, functionName, args);
  if ("reverted" in result) throw new Error(`${functionName}: ${result.reverted}`);
  return result;
}

function poolEvent(receipt: TransactionReceipt, name: string): Record<string, unknown> | undefined {
  for (const log of receipt.logs) {
    try {
      const event = decodeEventLog({ abi: abi.pool, data: log.data, topics: log.topics }) as unknown as { eventName: string; args: Record<string, unknown> };
      if (event.eventName === name) return event.args;
    } catch {
      // another contract's event
    }
  }
  return undefined;
}

/** What the route's adapter does with the action: pay `amountOut` (sync: at once; async: a fill), revert, or (async) never fill. */
type Outcome = { kind: "pays"; amountOut: bigint } | { kind: "reverts" } | { kind: "never" };

/** The swap's price that makes AMOUNT_IN pay exactly `amountOut` (output per 1e18 input units, rounded down by the adapter). */
const priceFor = (amountOut: bigint) => (amountOut === 0n ? 1n : (amountOut * 10n ** 18n + AMOUNT_IN - 1n) / AMOUNT_IN);

const amounts = fc.oneof(
  fc.constant(0n),
  fc.bigInt({ min: 1n, max: MIN_OUTPUT - 1n }),
  fc.constant(MIN_OUTPUT),
  fc.bigInt({ min: MIN_OUTPUT + 1n, max: 1000n * MIN_OUTPUT }),
);
const outcomes = fc.oneof(
  fc.record({ route: fc.constant("swap" as const), outcome: fc.oneof(amounts.map((amountOut): Outcome => ({ kind: "pays", amountOut })), fc.constant<Outcome>({ kind: "reverts" })) }),
  fc.record({
    route: fc.constant("fill" as const),
    outcome: fc.oneof(amounts.map((amountOut): Outcome => ({ kind: "pays", amountOut })), fc.constant<Outcome>({ kind: "reverts" }), fc.constant<Outcome>({ kind: "never" })),
  }),
);

/** One case, from the snapshot: set the outcome, act, settle or wait out the deadline, finalize; what became of the value. */
async function runCase(route: "swap" | "fill", outcome: Outcome) {
  const action = proven[route];
  if (!action) throw new Error("not proven");
  const poolAddress = stack.manifest.poolAddress;
  if (outcome.kind === "reverts") {
    // The adapter's code replaced by one that always reverts, its route approved again (same kind) for that code.
    await rpc(stack.rpcUrl, "anvil_setCode", [adapters[route], revertingCode(route === "swap" ? ROUTE_KIND.sync : ROUTE_KIND.async)]);
    await mustSend(0, poolAddress, abi.pool, "approveRoute", [ACTION_ROUTES[route], adapters[route], route === "swap" ? ROUTE_KIND.sync : ROUTE_KIND.async]);
  } else if (route === "swap" && outcome.kind === "pays") {
    await mustSend(0, adapters.swap, abi.swap, "setPrice", [pool.asset, weth, priceFor(outcome.amountOut)]);
  }
  const before = { usdc: await pool.balanceOf(pool.asset, poolAddress), weth: await pool.balanceOf(weth, poolAddress) };
  const acted = await mustSend(2, poolAddress, abi.pool, "transactAction", [action.transaction.proof, action.transaction.publicInputs, action.transaction.extData, action.terms]);
  const reservationId = poolEvent(acted, "ActionReserved")?.reservationId as Hex;
  const stateOf = async () => Number(((await pool.read(poolAddress, abi.pool, "reservations", [reservationId])) as unknown[])[10]);
  const afterAction = await stateOf();
  if (route === "fill" && outcome.kind === "pays") {
    // A fill below the minimum is refused (BelowMinimum): the order stays open, as if never filled.
    await send(0, adapters.fill, abi.fill, "fill", [reservationId, outcome.amountOut]);
  }
  if ((await stateOf()) === STATE.Pending) {
    await rpc(stack.rpcUrl, "evm_increaseTime", [hex(Number(action.terms.deadline - (await pool.chainTime())) + 1)]);
    await rpc(stack.rpcUrl, "evm_mine", []);
  }
  const finalized = poolEvent(await mustSend(4, poolAddress, abi.pool, "finalize", [reservationId]), "ReservationFinalized") as { refunded: boolean; asset: Address; amount: bigint; commitment: bigint };
  const after = { usdc: await pool.balanceOf(pool.asset, poolAddress), weth: await pool.balanceOf(weth, poolAddress) };
  return { afterAction, finalized, before, after, action };
}

describe("an action's value is never stuck (property)", () => {
  it("every route kind and adapter outcome ends in the settled output or a refund note, backed by the Pool's balance", async () => {
    await fc.assert(
      fc.asyncProperty(outcomes, async ({ route, outcome }) => {
        const snapshot = await rpc<Hex>(stack.rpcUrl, "evm_snapshot", []);
        try {
          const { afterAction, finalized, before, after, action } = await runCase(route, outcome);
          // A synchronous route settles or fails in the action's own transaction; only an asynchronous one waits.
          if (route === "swap") expect([STATE.Settled, STATE.Failed]).toContain(afterAction);
          else expect(afterAction).toBe(outcome.kind === "reverts" ? STATE.Failed : STATE.Pending);
          const settles = outcome.kind === "pays" && outcome.amountOut >= MIN_OUTPUT;
          const owner = { ownerPublicKey: action.keys.notePublicKey, blinding: action.blinding };
          if (settles) {
            const amount = outcome.amountOut - FINALIZE_FEE;
            expect(finalized).toMatchObject({ refunded: false, asset: weth, amount });
            expect(finalized.commitment).toBe(commitmentOf({ amount, asset: weth, ...owner }));
            // The output came in; the note holds it less the fee paid out.
            expect(after.weth - before.weth).toBe(amount);
            expect(before.usdc - after.usdc).toBe(AMOUNT_IN);
          } else {
            expect(finalized).toMatchObject({ refunded: true, asset: pool.asset, amount: AMOUNT_IN });
            expect(finalized.commitment).toBe(commitmentOf({ amount: AMOUNT_IN, asset: pool.asset, ...owner }));
            // The input is back in the Pool (never left, or taken back from the adapter), behind the refund note.
            expect(after.usdc).toBe(before.usdc);
            expect(after.weth).toBe(before.weth);
          }
        } finally {
          await rpc(stack.rpcUrl, "evm_revert", [snapshot]);
        }
      }),
      {
        numRuns: 40,
        // The edges always, whatever the seed: 0, below, exactly and above the minimum, a revert, never filled.
        examples: [
          ...(["swap", "fill"] as const).flatMap((route) =>
            [0n, MIN_OUTPUT - 1n, MIN_OUTPUT, MIN_OUTPUT + 1n].map((amountOut): [{ route: "swap" | "fill"; outcome: Outcome }] => [{ route, outcome: { kind: "pays", amountOut } }]),
          ),
          [{ route: "swap", outcome: { kind: "reverts" } }],
          [{ route: "fill", outcome: { kind: "reverts" } }],
          [{ route: "fill", outcome: { kind: "never" } }],
        ],
      },
    );
  }, 600_000);
});
