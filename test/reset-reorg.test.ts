import { describe, expect, it } from "vitest";
import { SnapshotError, type DevStack } from "../harness/index.ts";
import { snapshotHooks } from "../harness/snapshot/index.ts";
import type { QueueClient } from "../harness/client/index.ts";
import { devControl, headOf, relayState } from "./support/dev-controls.ts";
import type { poolFixture } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { rpc } from "./support/rpc.ts";

// Issue 40, item 1: a reorg that replaces the block of the reset's snapshot took anvil's snapshot ids
// (both, the spare too) with it: that reset answered 503 reset_failed "evm_revert: Resource not found",
// and every later one 503 "this snapshot is lost". The reset now reloads the clean chain it dumped at start.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let queue: QueueClient;

withQueueStack({ options: { store: ":memory:" } }, (s) => ({ stack, pool, queue } = s));

const head = () => headOf(stack);
const dev = (path: string, body?: unknown) => devControl(stack, path, body);
const relayConfirmed = (from: number) => relayState(stack, pool, queue, from);

describe("a reset after a reorg of its snapshot's block", () => {
  it("answers 200 and puts the chain back at the start's number and hash, after each of the issue's repros, then relays", async () => {
    await stack.reset();
    const start = await head();
    const block0 = async () => (await rpc<{ hash: string }>(stack.rpcUrl, "eth_getBlockByNumber", ["0x0", false])).hash;
    const genesis = await block0();
    const repros: Array<[string, () => Promise<unknown>]> = [
      ["reorg 1 on the fresh stack", () => dev("reorg", { depth: 1 })],
      ["mine 1, then reorg 2", async () => (await dev("mine", { blocks: 1 }), dev("reorg", { depth: 2 }))],
      // The same again right after a reset that fell back: its new ids die the same way.
      ["reorg 1 right after that reset", () => dev("reorg", { depth: 1 })],
      // Not only through our control: anvil_reorg straight on the chain's URL.
      ["anvil_reorg 1 on the chain URL", () => rpc(stack.rpcUrl, "anvil_reorg", [1, []])],
    ];
    for (const [what, repro] of repros) {
      const answer = await repro();
      if (answer && typeof answer === "object" && "status" in answer) expect(answer, what).toMatchObject({ status: 200 });
      expect((await head()).hash, what).not.toBe(start.hash);
      expect(await dev("reset"), what).toEqual({ status: 200, body: { reset: true } });
      expect(await head(), what).toMatchObject({ number: start.number, hash: start.hash });
      // Block 0 too (the reload once took the genesis anvil made before loading its state: stray-blocks.test.ts).
      expect(await block0(), what).toBe(genesis);
    }
    // The log says the reset fell back (diagnostics keeps the runtime's last lines).
    expect(stack.diagnostics().runtime.filter((line) => line.includes("reset fell back")).length).toBeGreaterThanOrEqual(repros.length);
    // The chain reloaded is the same chain: its past states too (a reorg of block 1 works again), and a relay confirms.
    expect((await dev("reorg", { depth: 1 })).status).toBe(200);
    expect((await dev("reset")).status).toBe(200);
    expect(await relayConfirmed(2)).toBe("confirmed");
    // The operation store goes back with the reloaded chain: a relay's operation, then a reorg down to block 1.
    const since = new Date(Date.now() - 60_000).toISOString();
    expect(stack.diagnostics(since).operations).toHaveLength(1);
    await dev("reorg", { depth: Number((await head()).number) });
    expect(await dev("reset")).toEqual({ status: 200, body: { reset: true } });
    expect(await head()).toMatchObject({ number: start.number, hash: start.hash });
    expect(stack.diagnostics(since).operations).toEqual([]);
  });

  it("takes fresh ids for next time: the next reset after a mined transaction is again one round trip", async () => {
    await dev("reorg", { depth: 1 });
    await stack.reset(); // falls back
    const start = await head();
    await dev("mine", { blocks: 2 });
    const trips: string[][] = [];
    snapshotHooks.roundTrip = (methods) => void trips.push(methods);
    try {
      await stack.reset();
    } finally {
      snapshotHooks.roundTrip = undefined;
    }
    expect(trips).toHaveLength(1);
    expect(trips[0]).toContain("evm_revert");
    expect((await head()).hash).toBe(start.hash);
  });

  it("a named fixture whose snapshot's block is reorged is built again; a plain snapshot is lost by name, and a reset still works", async () => {
    await stack.reset();
    const start = await head();
    let runs = 0;
    const setup = async () => {
      await dev("mine", { blocks: 2 });
      return ++runs;
    };
    expect(await stack.loadFixture(setup)).toBe(1);
    expect(await stack.loadFixture(setup)).toBe(1); // restored
    const fixtureHead = await head();
    await rpc(stack.rpcUrl, "anvil_reorg", [1, []]); // replaces the fixture's own block
    expect(await stack.loadFixture(setup)).toBe(2); // its setup ran again, from the clean state
    expect(Number((await head()).number)).toBe(Number(fixtureHead.number));
    expect(await stack.loadFixture(setup)).toBe(2);

    const taken = await stack.snapshot();
    await dev("reorg", { depth: 1 });
    const lost = await stack.revert(taken).catch((error: unknown) => error);
    expect(lost).toBeInstanceOf(SnapshotError);
    expect((lost as Error).message).toMatch(/^this snapshot is lost: .*a reorg of their block/);
    await expect(stack.revert(taken)).rejects.toThrow(/this snapshot is lost/);
    // anvil's failed revert left its chain without a head: a control that reads it is refused by name, not a 500.
    expect(await dev("reorg", { depth: 1 })).toMatchObject({ status: 503, body: { code: "chain_unavailable" } });
    await stack.reset();
    expect(await head()).toMatchObject({ number: start.number, hash: start.hash });
  });
});
