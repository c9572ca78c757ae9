import { describe, expect, it } from "vitest";
import { erc20Abi, type Address, type Hex } from "viem";
import { ACTION_ROUTES, type DevStack } from "../harness/index.ts";
import {
  createAccountKeys,
  createQueueClient,
  finalizedNote,
  poolAbi,
  prepareAction,
  QuoteVerificationError,
  readReservation,
  reviewedFrom,
  waitForReservation,
  type QueueClient,
} from "../harness/client/index.ts";
import { GAS, type poolFixture } from "./support/pool.ts";
import { startRuntimeProcess } from "./support/runtime-process.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// Quote -> action -> finalize with the client library, for both fixture routes, on a real stack.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let queue: QueueClient;
let weth: Address;

withQueueStack({}, async (started) => {
  ({ stack, pool, queue } = started);
  weth = stack.manifest.assets.find((a) => a.decimals === 18)?.address as Address;
});

const client = () => pool.user(0).public;
const gasOf = async (hash: string | null) => (await client().getTransactionReceipt({ hash: hash as Hex })).gasUsed;

/** A funded dUSDC note and a proven action through `route` spending it, with the client library (at the quoted fee, or `fee`). */
async function actionOf(route: keyof typeof ACTION_ROUTES, q?: QueueClient, fee?: bigint) {
  const qc = q ?? queue;
  const keys = createAccountKeys();
  const config = await qc.beforePrepare();
  const quote = await qc.quote(config, { route: ACTION_ROUTES[route], assetIn: pool.asset, assetOut: weth, amountIn: pool.usdc("30") });
  const { state, input } = await pool.fundedNote(2, keys, pool.usdc("31"));
  const prepared = await prepareAction({ config, quote, prover: pool.prover, tree: state.tree, keys, inputs: [input], ...(fee === undefined ? {} : { fee }) });
  return { keys, config, quote, prepared };
}

describe("external actions with the client library", () => {
  it("swap: quote, action, finalize; the owner opens the finalized note and spends it", async () => {
    const { keys, config, quote, prepared } = await actionOf("swap");
    const started = performance.now();
    const op = await queue.submitAction(config, prepared, { idempotencyKey: crypto.randomUUID() });
    const acted = await queue.waitFor("withdraw", op.id);
    expect(acted.state).toBe("confirmed");
    const reservationId = acted.action?.reservationId as Hex;
    expect(await waitForReservation({ client: client(), pool: config.poolAddress as Address, reservationId })).toMatchObject({ state: "settled", amountOut: BigInt(quote.expectedOutput) });
    const fin = await queue.waitFor("withdraw", (await queue.finalize(config, reservationId)).id);
    expect(fin.state).toBe("confirmed");
    const elapsed = performance.now() - started;
    const { note, leafIndex, refunded } = await finalizedNote({ client: client(), pool: config.poolAddress as Address, reservationId, keys, output: prepared.output });
    expect(refunded).toBe(false);
    expect(note).toMatchObject({ asset: weth, amount: BigInt(quote.expectedOutput) - BigInt(quote.fees.finalize) });
    console.log(`gas: action ${await gasOf(acted.transactionHash)}, finalize ${await gasOf(fin.transactionHash)}; submit -> finalized ${elapsed.toFixed(0)} ms`);

    // The owner spends it: a withdrawal of the whole dWETH note, sent from a wallet of the owner's.
    const payee = "0x00000000000000000000000000000000000a11ce" as Address;
    const { transaction } = await pool.prove({ asset: weth, tree: (await pool.sync()).tree, keys, inputs: [{ note, leafIndex }], outputs: [], extAmount: -note.amount, recipient: payee });
    const { wallet } = pool.user(3);
    const hash = await wallet.writeContract({ address: config.poolAddress as Address, abi: poolAbi, functionName: "transact", args: [transaction.proof, transaction.publicInputs, transaction.extData], gas: GAS });
    expect((await client().waitForTransactionReceipt({ hash })).status).toBe("success");
    expect(await client().readContract({ address: weth, abi: erc20Abi, functionName: "balanceOf", args: [payee] })).toBe(note.amount);
  });

  it("async fill: settled when the harness's filler delivers; never filled, it is refunded after the deadline", async () => {
    const filled = await actionOf("fill");
    const op = await queue.waitFor("withdraw", (await queue.submitAction(filled.config, filled.prepared)).id);
    const reservationId = op.action?.reservationId as Hex;
    expect((await readReservation(client(), filled.config.poolAddress as Address, reservationId)).state).toBe("pending");
    // The action's status answer follows the reservation (as last read: it never waits on the chain).
    const reservationSeen = async (state: string) => {
      for (let i = 0; i < 50; i++) {
        const seen = (await queue.status("withdraw", op.id)).action?.reservation?.state;
        if (seen === state) return seen;
        await new Promise((r) => setTimeout(r, 100));
      }
      return (await queue.status("withdraw", op.id)).action?.reservation?.state;
    };
    expect(await reservationSeen("pending")).toBe("pending");
    await stack.actions.fill(reservationId, BigInt(filled.quote.expectedOutput) + 1n);
    expect(await reservationSeen("settled")).toBe("settled");
    expect((await queue.waitFor("withdraw", (await queue.finalize(filled.config, reservationId)).id)).state).toBe("confirmed");
    expect(await reservationSeen("finalized")).toBe("finalized");
    const out = await finalizedNote({ client: client(), pool: filled.config.poolAddress as Address, reservationId, keys: filled.keys, output: filled.prepared.output });
    expect(out.note.amount).toBe(BigInt(filled.quote.expectedOutput) + 1n - BigInt(filled.quote.fees.finalize));

    // Its fee pays for the action and for a finalize in dUSDC: the relayer finalizes its refund too.
    const fees = stack.manifest.relayFees.actions.find((f) => f.route === ACTION_ROUTES.fill && f.asset === pool.asset);
    const withheld = await actionOf("fill", undefined, BigInt(fees?.action ?? 0) + BigInt(fees?.finalize ?? 0));
    const op2 = await queue.waitFor("withdraw", (await queue.submitAction(withheld.config, withheld.prepared)).id);
    const id2 = op2.action?.reservationId as Hex;
    await stack.actions.passDeadline(id2);
    expect((await readReservation(client(), withheld.config.poolAddress as Address, id2)).state).toBe("expired");
    await expect(stack.actions.fill(id2, BigInt(withheld.quote.expectedOutput))).rejects.toThrow(/ActionExpired/);
    expect((await queue.waitFor("withdraw", (await queue.finalize(withheld.config, id2)).id)).state).toBe("confirmed");
    const refund = await finalizedNote({ client: client(), pool: withheld.config.poolAddress as Address, reservationId: id2, keys: withheld.keys, output: withheld.prepared.output });
    expect(refund).toMatchObject({ refunded: true, note: { asset: pool.asset, amount: pool.usdc("30") } });
  });

  it("the client refuses a quote whose terms were changed after signing", async () => {
    const doctored = createQueueClient({
      baseUrl: stack.queueUrl,
      reviewed: reviewedFrom(stack.manifest),
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (!String(input).endsWith("/api/queue/quote")) return response;
        const body = (await response.json()) as { minOutput: string; typedData: { message: { minOutput: string } } };
        body.minOutput = body.typedData.message.minOutput = "1"; // a server that lowers the minimum
        return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
      },
    });
    const config = await doctored.beforePrepare();
    await expect(doctored.quote(config, { route: ACTION_ROUTES.swap, assetIn: pool.asset, assetOut: weth, amountIn: pool.usdc("30") })).rejects.toThrow(QuoteVerificationError);
  });

  it("a runtime SIGKILLed between quote, action and finalize, and started again, loses nothing", async () => {
    const store = `${stack.stateDir}/standalone.sqlite`;
    let runtime = await startRuntimeProcess(stack, ["--store", store]);
    const first = createQueueClient({ baseUrl: runtime.url, reviewed: reviewedFrom(stack.manifest) });
    const { config, prepared } = await actionOf("swap", first);
    runtime.child.kill("SIGKILL");
    await runtime.child;
    runtime = await startRuntimeProcess(stack, ["--store", store]);
    try {
      const again = createQueueClient({ baseUrl: runtime.url, reviewed: reviewedFrom(stack.manifest) });
      // The quote was stored: the action citing it is accepted by the restarted runtime.
      const op = await again.submitAction(config, prepared, { idempotencyKey: "after-restart" });
      runtime.child.kill("SIGKILL");
      await runtime.child;
      runtime = await startRuntimeProcess(stack, ["--store", store]);
      const third = createQueueClient({ baseUrl: runtime.url, reviewed: reviewedFrom(stack.manifest) });
      const acted = await third.waitFor("withdraw", op.id);
      expect(acted.state, JSON.stringify(acted.reason)).toBe("confirmed");
      expect((await third.submitAction(config, prepared, { idempotencyKey: "after-restart" })).id).toBe(op.id);
      const fin = await third.waitFor("withdraw", (await third.finalize(config, acted.action?.reservationId as string)).id);
      expect(fin.state).toBe("confirmed");
    } finally {
      runtime.child.kill("SIGTERM");
      await runtime.child;
    }
  });
});
