import type { BrowserContext } from "@playwright/test";
import { playwright } from "./playwright-test.ts";
import { startDevStack, type DevStack, type DevStackOptions, type StackFixture } from "../index.ts";
import { sweepAbandonedTempStacks } from "../state-dir/index.ts";
import { installTestWallet, type TestWalletOptions } from "./install.ts";
import { attachStack, attachWallet, type StackBundleMode } from "./report.ts";
import type { TestWallet } from "./wallet.ts";

export interface StackWorkerFixtures {
  /** Options of each worker's stack (default: a local stack on free ports, in a temp dir). Set with test.use or the config's `use`. */
  devStackOptions: DevStackOptions;
  /** This worker's stack, started on first use, stopped when the worker ends. */
  workerStack: DevStack;
}

export interface StackTestFixtures {
  /**
   * The state each test starts from: null (the default) is the stack as it started; a StackFixture is
   * built on first use and restored for every later test that names it. Set with test.use.
   */
  stackFixture: StackFixture | null;
  /** When the test's stack is saved as a repro bundle and attached to its report. Default "retain-on-failure". */
  stackBundle: StackBundleMode;
  /** How the test wallet is put in the pages. */
  testWallet: TestWalletOptions;
  /** The stack, reset for this test (chain and operation store) to `stackFixture`'s state. */
  stack: DevStack;
  /** What `stackFixture` returned for this test (undefined without one). */
  fixture: unknown;
  /** The test wallet in this test's pages (every page of `context`). */
  wallet: TestWallet;
}

const fixtureValues = new WeakMap<DevStack, unknown>();
const wallets = new WeakMap<BrowserContext, TestWallet>();

/**
 * Playwright Test fixtures for queue-devstack: one stack per worker, started lazily and stopped with the
 * worker; each test gets it back in a clean state (or in its `stackFixture`'s state) in milliseconds, and
 * every page of its context holds the test wallet.
 */
export const test = playwright.test.extend<StackTestFixtures, StackWorkerFixtures>({
  devStackOptions: [{}, { scope: "worker", option: true }],
  workerStack: [
    async ({ devStackOptions }, use) => {
      // What a killed run left (its owner dead: recorded PIDs, never process names).
      await sweepAbandonedTempStacks();
      const stack = await startDevStack(devStackOptions);
      try {
        await use(stack);
      } finally {
        await stack.stop();
      }
    },
    { scope: "worker", timeout: 120_000 },
  ],
  stackFixture: [null, { option: true }],
  stackBundle: ["retain-on-failure", { option: true }],
  testWallet: [{}, { option: true }],
  stack: async ({ workerStack, stackFixture, stackBundle }, use, testInfo) => {
    // At the start, not the end, of a test: a run of tests naming one fixture restores it directly.
    const value = stackFixture === null ? await workerStack.reset() : await workerStack.loadFixture(stackFixture.setup);
    fixtureValues.set(workerStack, value);
    const startedAt = new Date().toISOString();
    await use(workerStack);
    await attachStack(workerStack, testInfo, startedAt, stackBundle);
  },
  fixture: async ({ stack }: { stack: DevStack }, use: (value: unknown) => Promise<void>) => use(fixtureValues.get(stack)),
  // The wallet goes in with the context, before any page of it exists: the app's first script finds it.
  context: async ({ context, stack, testWallet }, use, testInfo) => {
    const wallet = await installTestWallet(context, stack, testWallet);
    wallets.set(context, wallet);
    await use(context);
    wallet.close();
    await attachWallet(wallet, testInfo);
  },
  wallet: async ({ context }, use) => use(wallets.get(context) as TestWallet),
});
