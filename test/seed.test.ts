import { defineStackFixture, seed, SEED_CONFIRMATIONS, SeedError, type DevStack, type SeedResult } from "../harness/index.ts";
import { closeProvers } from "../harness/client/index.ts";
import { afterAll, describe, expect, test } from "../harness/vitest/index.ts";

// Seeded scenarios (issue 41, item 4), as docs/seeding.md uses them: a named starting state of the vitest
// fixtures, on dev proofs, built once on the worker's stack and restored by a revert for each test; its
// every state read back through the status routes.
const demo = defineStackFixture("demo", (stack) => seed(stack, "demo"));
test.override({ devStackOptions: { relay: { requiredConfirmations: SEED_CONFIRMATIONS } }, stackFixture: demo });
afterAll(closeProvers);

type Status = { state: string; action?: { reservation?: { state: string } | null } };
const status = async (stack: DevStack, kind: string, id: string) => (await (await fetch(`${stack.queueUrl}/api/queue/${kind}-status?id=${id}`)).json()) as Status;
const dev = (stack: DevStack, path: string, body: unknown) => fetch(`${stack.queueUrl}/api/dev/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe('seed(stack, "demo") as a named starting state', () => {
  test("leaves one operation in each state, as the status routes answer", async ({ stack, fixture }) => {
    const seeded = fixture as SeedResult;
    console.log(`seeding "demo" on ${stack.proofs} proofs took ${seeded.ms} ms`);
    for (const [state, op] of Object.entries(seeded.operations)) expect((await status(stack, op.kind, op.id)).state, state).toBe(state);
  });

  test("leaves shielded balances on two dev accounts", async ({ stack, fixture }) => {
    const { accounts } = fixture as SeedResult;
    expect(accounts.map((a) => a.address)).toEqual([stack.accounts[1]?.address, stack.accounts[2]?.address]);
    for (const account of accounts) {
      expect(Object.keys(account.balances)).toHaveLength(2);
      for (const balance of Object.values(account.balances)) expect(balance).toBeGreaterThan(0n);
    }
  });

  test("lets the held operations proceed once the relayer is resumed and mining released", async ({ stack, fixture }) => {
    const seeded = fixture as SeedResult;
    await dev(stack, "relayer", { engine: "running" });
    await dev(stack, "mining", { mode: "auto" });
    const held = [seeded.operations.accepted, seeded.operations.submitted, seeded.operations.included];
    for (let tries = 0; tries < 200; tries++) {
      const states = await Promise.all(held.map(async (op) => (await status(stack, op.kind, op.id)).state));
      if (states.every((s) => s === "confirmed")) break;
      if (states.includes("included")) await dev(stack, "mine", { blocks: 1 });
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const op of held) expect((await status(stack, op.kind, op.id)).state).toBe("confirmed");
  });

  test("is restored for the next test: every state again, and the swap's reservation settled, awaiting finalize", async ({ stack, fixture }) => {
    const seeded = fixture as SeedResult;
    for (const [state, op] of Object.entries(seeded.operations)) expect((await status(stack, op.kind, op.id)).state, state).toBe(state);
    // Read again after a restore (a status answer's reservation is, in the background): an app polls.
    let op = await status(stack, "withdraw", seeded.reservation.operationId);
    for (let tries = 0; tries < 100 && op.action?.reservation?.state !== "settled"; tries++) {
      await new Promise((r) => setTimeout(r, 50));
      op = await status(stack, "withdraw", seeded.reservation.operationId);
    }
    expect(op.state).toBe("confirmed");
    expect(op.action?.reservation?.state).toBe("settled");
    await dev(stack, "mine", { blocks: 1 }); // the included send confirmed, then restored as the fixtures do
    const started = performance.now();
    await stack.loadFixture(demo.setup);
    expect((await status(stack, "send", seeded.operations.included.id)).state).toBe("included");
    console.log(`restoring the seeded state took ${Math.round(performance.now() - started)} ms`);
  });

  test("seeds a stack left held (mining held, relayer paused: the seeded state itself) without waiting for ever", async ({ stack }) => {
    const again = await seed(stack, "demo");
    for (const [state, op] of Object.entries(again.operations)) expect((await status(stack, op.kind, op.id)).state, state).toBe(state);
  });

  test("names an unknown scenario with a SeedError, before anything is done", async ({ stack }) => {
    await expect(seed(stack, "nope")).rejects.toThrow(new SeedError("nope", "no such scenario (known: demo)"));
  });
});
