import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seed, SEED_CONFIRMATIONS, SeedError, startDevStack, type DevStack, type SeedResult } from "../harness/index.ts";
import { closeProvers } from "../harness/client/index.ts";

// Seeded scenarios (issue 41, item 4): one stack on dev proofs, seeded once, its every state read back
// through the status routes and the dashboard's feed.
let stack: DevStack;
let seeded: SeedResult;
// As a named fixture would: built once, then restored by a revert.
const demo = (s: DevStack) => seed(s, "demo");
beforeAll(async () => {
  stack = await startDevStack({ relay: { requiredConfirmations: SEED_CONFIRMATIONS } });
  seeded = await stack.loadFixture(demo);
}, 120_000);
afterAll(async () => {
  await closeProvers();
  await stack?.stop();
});

const status = async (kind: string, id: string) => (await (await fetch(`${stack.queueUrl}/api/queue/${kind}-status?id=${id}`)).json()) as { state: string; action?: { reservation?: { state: string } } };

describe("seed(stack, \"demo\")", () => {
  it("leaves one operation in each state, as the status routes answer", async () => {
    console.log(`seeding "demo" on ${stack.proofs} proofs took ${seeded.ms} ms`);
    for (const [state, op] of Object.entries(seeded.operations)) expect((await status(op.kind, op.id)).state, state).toBe(state);
  });

  it("leaves a confirmed swap whose reserved output waits for finalize", async () => {
    // Read again after a restore (as a status answer's reservation is, in the background): an app polls.
    let op = await status("withdraw", seeded.reservation.operationId);
    for (let tries = 0; tries < 100 && op.action?.reservation?.state !== "settled"; tries++) {
      await new Promise((r) => setTimeout(r, 50));
      op = await status("withdraw", seeded.reservation.operationId);
    }
    expect(op.state).toBe("confirmed");
    expect(op.action?.reservation?.state).toBe("settled");
  });

  it("leaves shielded balances on two dev accounts", () => {
    expect(seeded.accounts.map((a) => a.address)).toEqual([stack.accounts[1]?.address, stack.accounts[2]?.address]);
    for (const account of seeded.accounts) expect(Object.values(account.balances).every((b) => b > 0n) && Object.keys(account.balances).length).toBe(2);
  });

  it("lets the held operations proceed once the relayer is resumed and mining released, and a revert seeds it again in milliseconds", async () => {
    const dev = (path: string, body: unknown) => fetch(`${stack.queueUrl}/api/dev/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    await dev("relayer", { engine: "running" });
    await dev("mining", { mode: "auto" });
    const held = [seeded.operations.accepted, seeded.operations.submitted, seeded.operations.included];
    for (let tries = 0; tries < 200; tries++) {
      const states = await Promise.all(held.map(async (op) => (await status(op.kind, op.id)).state));
      if (states.every((s) => s === "confirmed")) break;
      if (states.includes("included")) await dev("mine", { blocks: 1 });
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const op of held) expect((await status(op.kind, op.id)).state).toBe("confirmed");
    const started = performance.now();
    const again = await stack.loadFixture(demo);
    console.log(`restoring the seeded state took ${Math.round(performance.now() - started)} ms`);
    expect(again).toBe(seeded);
    for (const [state, op] of Object.entries(seeded.operations)) expect((await status(op.kind, op.id)).state, state).toBe(state);
  });

  it("names an unknown scenario with a SeedError, before anything is done", async () => {
    await expect(seed(stack, "nope")).rejects.toThrow(new SeedError("nope", "no such scenario (known: demo)"));
  });
});
