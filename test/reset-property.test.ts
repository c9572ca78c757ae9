import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { toRelayRequest, type QueueClient } from "../harness/client/index.ts";
import { poolFixture, provenSend } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { devControl, headOf, relayState } from "./support/dev-controls.ts";
import { VARIANTS_PATH } from "./support/patch-variants.ts";

// Issue 40, item 1: whatever a client does with the dev controls, the reset after it answers 200 and
// puts the chain back at the start's number and hash, and the stack relays again. Seeded random
// sequences of every control, through HTTP as a client sends them, against one stack; each followed by a
// reset. RESET_SEED=<seed> repeats a run exactly (the seed is printed); RESET_RUNS sets its size.
const RUNS = Number(process.env.RESET_RUNS ?? 200);
const SEED = Number(process.env.RESET_SEED ?? Math.floor(Math.random() * 2 ** 31));
/** Sequences per test (each test's own seed follows from the run's), and a relay confirmed after every RELAY_EVERY-th. */
const PER_TEST = 50;
const RELAY_EVERY = 25;
console.log(`reset property: seed ${SEED}, ${RUNS} sequences (RESET_SEED=${SEED} repeats it)`);

let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let queue: QueueClient;
withQueueStack({ options: { store: ":memory:" } }, (s) => ({ stack, pool, queue } = s));

const head = () => headOf(stack);
const post = (path: string, body?: unknown) => devControl(stack, path, body);

/** Every dev control that changes the stack, with its arguments. */
const FAULTS = [
  { fault: "fail" },
  { fault: "timeout", methods: ["eth_getLogs"] },
  { fault: "delay", delayMs: 50 },
  { fault: "drop-logs" },
  { fault: "unsupported", methods: ["eth_feeHistory"] },
  { fault: "none" },
] as const;
const control = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("mine" as const), blocks: fc.integer({ min: 1, max: 5 }) }) },
  // A depth the chain allows, as a share of it: 1 to the head's number (the whole chain, up to the control's 64), the snapshot's block included.
  { weight: 12, arbitrary: fc.record({ kind: fc.constant("reorg" as const), percent: fc.integer({ min: 0, max: 100 }) }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("time" as const), seconds: fc.integer({ min: 1, max: 30 * 86_400 }) }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("mining" as const), mode: fc.constantFrom("hold" as const, "auto" as const) }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("config" as const), serve: fc.constantFrom("alternate" as const, "original" as const) }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("rpc" as const), fault: fc.constantFrom(...FAULTS) }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("revert-next" as const), armed: fc.boolean() }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("patch" as const) }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("relayer" as const), engine: fc.constantFrom("paused" as const, "running" as const) }) },
  // A relay submitted mid-sequence (rare: its deposit and proof cost most): the reset takes it out of chain and store together.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("send" as const), from: fc.integer({ min: 2, max: 8 }) }) },
);
type Control = typeof control extends fc.Arbitrary<infer C> ? C : never;

/** What the sequence has switched on, for the controls whose next step depends on it. */
interface Switched {
  patched: boolean;
  held: boolean;
  fault: boolean;
  alternate: boolean;
  /** A reorg reached the Pool's deployment block: until the reset, the chain is not the manifest's. */
  redeployed: boolean;
}

/**
 * What each control may answer besides 200, by problem code: nothing else, never a 500. A reorg deeper
 * than the chain keeps past states for is refused; a patch is refused while the deployment's block is
 * reorged away (the runtime checks the patched chain), or while an RPC fault keeps that check (or the
 * alternate deployment's) from the chain.
 */
const ALLOWED: Record<Control["kind"], string[]> = {
  mine: ["ok"],
  reorg: ["ok", "wrong_route"],
  time: ["ok"],
  mining: ["ok"],
  config: ["ok", "chain_unavailable"],
  rpc: ["ok"],
  "revert-next": ["ok"],
  patch: ["ok", "deployment_mismatch", "chain_unavailable", "unknown_contract"],
  relayer: ["ok"],
  send: ["ok", "chain_unavailable", "chain_reverting"],
};

async function apply(step: Control, switched: Switched): Promise<{ status: number; body: Record<string, unknown> }> {
  switch (step.kind) {
    case "mine":
      return post("mine", { blocks: step.blocks });
    case "reorg": {
      const top = Number((await head()).number);
      const depth = Math.min(64, Math.max(1, Math.round((step.percent * top) / 100)));
      if (top - depth < stack.manifest.deploymentBlock) switched.redeployed = true;
      return post("reorg", { depth });
    }
    case "time":
      return post("time", { seconds: step.seconds });
    case "mining":
      switched.held = step.mode === "hold";
      return post("mining", { mode: step.mode });
    case "config": {
      const answer = await post("config", { serve: step.serve });
      if (answer.status === 200) switched.alternate = step.serve === "alternate";
      return answer;
    }
    case "rpc":
      switched.fault = step.fault.fault !== "none";
      return post("rpc", step.fault);
    case "revert-next":
      return post("revert-next", { armed: step.armed });
    case "patch": {
      // (a Pool whose deployment block was reorged away has no code until its transactions are mined again: unknown_contract)
      // The fixed Pool (the Pool itself, compiled once into the variants): relays still go through.
      const answer = switched.patched ? await post("unpatch", { contract: "Pool" }) : await post("patch", { contract: "Pool", source: `${VARIANTS_PATH}:PoolFixed` });
      if (answer.status === 200) switched.patched = !switched.patched;
      return answer;
    }
    case "relayer":
      return post("relayer", { engine: step.engine });
    case "send": {
      // Its deposit needs a block, a faulty RPC makes its admission slow, and the client reviewed the
      // original deployment as deployed at its block: sent only then.
      if (switched.held || switched.fault || switched.alternate || switched.redeployed) return { status: 200, body: {} };
      const { config, transaction } = await provenSend(stack, pool, queue, step.from);
      const response = await fetch(`${stack.queueUrl}/api/queue/send-relay`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(toRelayRequest(config, transaction)) });
      return { status: response.status === 202 ? 200 : response.status, body: (await response.json()) as Record<string, unknown> };
    }
  }
}

const relayConfirmed = (from: number) => relayState(stack, pool, queue, from);

describe("reset after any sequence of dev controls", () => {
  let done = 0;
  for (let part = 0; part * PER_TEST < RUNS; part++) {
    const runs = Math.min(PER_TEST, RUNS - part * PER_TEST);
    it(`${runs} random sequences (seed ${SEED}, part ${part + 1}): every control answers, every reset 200 and back at the start's number and hash, a relay confirmed every ${RELAY_EVERY}`, async () => {
      await stack.reset();
      const start = await head();
      const switched: Switched = { patched: false, held: false, fault: false, alternate: false, redeployed: false };
      await fc.assert(
        fc.asyncProperty(fc.array(control, { minLength: 1, maxLength: 6 }), async (steps) => {
          const since = new Date().toISOString();
          for (const step of steps) {
            const answer = await apply(step, switched);
            const code = answer.status === 200 ? "ok" : String(answer.body.code);
            expect(ALLOWED[step.kind], `${JSON.stringify(steps)}: ${JSON.stringify(step)} answered ${answer.status} ${JSON.stringify(answer.body)}`).toContain(code);
          }
          const reset = await post("reset");
          expect(reset, JSON.stringify(steps)).toEqual({ status: 200, body: { reset: true } });
          const after = await head();
          expect({ number: after.number, hash: after.hash }, JSON.stringify(steps)).toEqual({ number: start.number, hash: start.hash });
          // The store went back with the chain: no operation of this sequence is left.
          expect(stack.diagnostics(since).operations, JSON.stringify(steps)).toEqual([]);
          Object.assign(switched, { held: false, fault: false, alternate: false, redeployed: false });
          // A patch is the stack's baseline (a reset keeps it): taken off for the next sequence.
          if (switched.patched) {
            expect((await post("unpatch", { contract: "Pool" })).status).toBe(200);
            switched.patched = false;
          }
          if (++done % RELAY_EVERY === 0) expect(await relayConfirmed(2 + (done % 7))).toBe("confirmed");
        }),
        { seed: SEED + part, numRuns: runs, endOnFailure: true },
      );
      expect(await relayConfirmed(2 + (part % 7))).toBe("confirmed");
    });
  }
});
