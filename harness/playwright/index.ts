import "../../src/node-version-guard.ts"; // first: one line on an older Node, before anything needing 22 runs

/**
 * queue-devstack for Playwright Test (entry `queue-devstack/playwright`): a stack per worker, reset
 * before each test, and a test wallet in every page. Development only.
 */
import { playwright } from "./playwright-test.ts";

export { test, type StackTestFixtures, type StackWorkerFixtures } from "./fixtures.ts";
export { TestWallet, type PendingRequest, type WalletLogEntry } from "./wallet.ts";
export type { TestWalletOptions } from "./install.ts";
export type { StackBundleMode } from "./report.ts";
export { PROVIDER_ERRORS } from "./provider-errors.ts";
export { defineStackFixture, type StackFixture, type DevStack, type DevStackOptions, type StackSnapshot } from "../index.ts";
export const expect: typeof import("@playwright/test").expect = playwright.expect;
