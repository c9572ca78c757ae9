import { QueueDevstackError } from "../../src/errors/index.ts";
/** The scenarios `seed` knows, by name. */
export const SEED_SCENARIOS = ["demo"] as const;
export type SeedScenario = (typeof SEED_SCENARIOS)[number];

/** A seed that cannot be made: an unknown scenario, or a stack it cannot be made on. */
export class SeedError extends QueueDevstackError {
  override name = "SeedError";
  readonly code = "seed_refused";
  override readonly docsPath = "docs/seeding.md#errors";
  readonly scenario: string;
  constructor(scenario: string, reason: string) {
    super(`seed ${JSON.stringify(scenario)}: ${reason}`);
    this.scenario = scenario;
  }
}

export function checkScenario(name: string): SeedScenario {
  if ((SEED_SCENARIOS as readonly string[]).includes(name)) return name as SeedScenario;
  throw new SeedError(name, `no such scenario (known: ${SEED_SCENARIOS.join(", ")})`);
}

/** The demo's included operation stays included only while it lacks a confirmation: it needs two. */
export const SEED_CONFIRMATIONS = 2;
