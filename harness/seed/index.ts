// Seeded scenarios: a stack put, through the real client, in a state an app can render (shielded
// balances, an operation in every state, a reservation awaiting finalize). The scenario itself is
// loaded on first use: importing the harness does not load the client and its prover.
import type { DevStack } from "../dev-stack.ts";
import { checkScenario } from "./scenarios.ts";
import type { SeedResult } from "./demo.ts";

export { SEED_SCENARIOS, SEED_CONFIRMATIONS, SeedError, checkScenario, type SeedScenario } from "./scenarios.ts";
export type { SeedResult, SeededAccount, SeededOperation, SeededState } from "./demo.ts";

/**
 * Puts the stack in the named scenario's state (see docs/seeding.md) and says what it made. Unknown names
 * are a SeedError before anything is done.
 * @example
 * const stack = await startDevStack({ relay: { requiredConfirmations: SEED_CONFIRMATIONS } });
 * const seeded = await seed(stack, "demo");
 * seeded.operations.submitted.id; // op_…, in state submitted
 */
export async function seed(stack: DevStack, scenario: string): Promise<SeedResult> {
  checkScenario(scenario);
  const { seedDemo } = await import("./demo.ts");
  return seedDemo(stack);
}
