import { describe, expect, it } from "vitest";
import type { Address, Hex } from "viem";
import { ACTION_ROUTES, type DevStack } from "../harness/index.ts";
import { createQueueClient, finalizedNote, readReservation, reviewedFrom, type QueueClient } from "../harness/client/index.ts";
import { provenAction } from "./support/actions.ts";
import type { poolFixture } from "./support/pool.ts";
import { startRuntimeProcess } from "./support/runtime-process.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// An action's life through the queue, on dev proofs (the swap end to end, proving for real, is in
// actions-client.test.ts): the fill route settled by the harness's filler, or refunded after its deadline;
// a runtime SIGKILLed between quote, action and finalize.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let queue: QueueClient;
let weth: Address;

withQueueStack({}, async (started) => {
  ({ stack, pool, queue } = started);
  weth = stack.manifest.assets.find((a) => a.decimals === 18)?.address as Address;
});

const client = () => pool.user(0).public;

describe("external actions with the client library", () => {
  it("async fill: settled when the harness's filler delivers; never filled, it is refunded after the deadline", async () => {
    const filled = await provenAction(pool, queue, weth, "fill");
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
    const withheld = await provenAction(pool, queue, weth, "fill", BigInt(fees?.action ?? 0) + BigInt(fees?.finalize ?? 0));
    const op2 = await queue.waitFor("withdraw", (await queue.submitAction(withheld.config, withheld.prepared)).id);
    const id2 = op2.action?.reservationId as Hex;
    await stack.actions.passDeadline(id2);
    expect((await readReservation(client(), withheld.config.poolAddress as Address, id2)).state).toBe("expired");
    await expect(stack.actions.fill(id2, BigInt(withheld.quote.expectedOutput))).rejects.toThrow(/ActionExpired/);
    expect((await queue.waitFor("withdraw", (await queue.finalize(withheld.config, id2)).id)).state).toBe("confirmed");
    const refund = await finalizedNote({ client: client(), pool: withheld.config.poolAddress as Address, reservationId: id2, keys: withheld.keys, output: withheld.prepared.output });
    expect(refund).toMatchObject({ refunded: true, note: { asset: pool.asset, amount: pool.usdc("30") } });
  });

  it("a runtime SIGKILLed between quote, action and finalize, and started again, loses nothing", async () => {
    const store = `${stack.stateDir}/standalone.sqlite`;
    let runtime = await startRuntimeProcess(stack, ["--store", store]);
    const first = createQueueClient({ baseUrl: runtime.url, reviewed: reviewedFrom(stack.manifest) });
    const { config, prepared } = await provenAction(pool, first, weth, "swap");
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
