import type { DevStack } from "./dev-stack.ts";

/**
 * A named starting state for tests (Hardhat's loadFixture for the whole stack): built once per stack,
 * then restored. An object, not a bare function: vitest and Playwright would take a function for a
 * fixture of their own.
 */
export interface StackFixture<T = unknown> {
  readonly name: string;
  readonly setup: (stack: DevStack) => Promise<T>;
}

export function defineStackFixture<T>(name: string, setup: (stack: DevStack) => Promise<T>): StackFixture<T> {
  return Object.freeze({ name, setup });
}
