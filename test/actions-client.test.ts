import { describe, expect, it } from "vitest";
import { erc20Abi, type Address, type Hex } from "viem";
import { ACTION_ROUTES, type DevStack } from "../harness/index.ts";
import {
  createQueueClient,
  finalizedNote,
  poolAbi,
  QuoteVerificationError,
  reviewedFrom,
  waitForReservation,
  type QueueClient,
} from "../harness/client/index.ts";
import { provenAction } from "./support/actions.ts";
import { GAS, type poolFixture } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// Quote -> action -> finalize with the client library, on a real stack proving for real: the swap end to end,
// its finalized note spent. The fill route, its refund and a runtime killed midway run on dev proofs
// (actions-lifecycle.test.ts): what they check is the queue's, not the proof's.
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

describe("external actions with the client library", () => {
  it("swap: quote, action, finalize; the owner opens the finalized note and spends it", async () => {
    const { keys, config, quote, prepared } = await provenAction(pool, queue, weth, "swap");
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

});
