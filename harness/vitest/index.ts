import "../../src/node-version-guard.ts"; // first: one line on an older Node, before anything needing 22 runs
import { test as base, type TestAPI } from "vitest";
import { createPublicClient, createTestClient, createWalletClient, http, type Chain, type PublicClient, type TestClient, type WalletClient, type Account, type Transport } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { sepoliaAt } from "../../src/chain/client.ts";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
// The queue client alone, not the client's door: each test worker would import the rest of the client (~110 ms) for nothing.
import { createQueueClient, reviewedFrom, type QueueClient } from "../client/queue-client.ts";
import type { DevAccount } from "../chain/index.ts";
import { startDevStack, defineStackFixture, diagnosticsText, type DevStack, type DevStackOptions, type StackFixture } from "../index.ts";

export interface StackFixtures {
  /** Options of each worker's stack (default: a local stack on free ports, in a temp dir). Set with test.override. */
  devStackOptions: DevStackOptions;
  /**
   * The state each test starts from: null (the default) is the stack as it started; a StackFixture is
   * built on first use and restored for every later test that names it. Set with test.override.
   */
  stackFixture: StackFixture | null;
  /** This worker's stack, started on first use, stopped when the worker ends. */
  workerStack: DevStack;
  /** The stack, reset for this test (chain and operation store) to `stackFixture`'s state. */
  stack: DevStack;
  /** What `stackFixture` returned for this test (undefined without one). */
  fixture: unknown;
  manifest: DeploymentConfig;
  /** Funded dev accounts (anvil's known keys, relayer excluded): accounts[0] deployed the fixtures. */
  accounts: DevAccount[];
  chain: Chain;
  publicClient: PublicClient;
  /** A wallet for accounts[1] (anvil's #2): not the deployer, not the relayer. */
  walletClient: WalletClient<Transport, Chain, Account>;
  /** anvil's cheat codes (mine, setBalance, impersonate, increaseTime): the reset undoes what they did, impersonations included. */
  testClient: TestClient<"anvil", Transport, Chain>;
  /** The typed queue client, its reviewed deployment taken from this stack's manifest. */
  queue: QueueClient;
}

/**
 * vitest fixtures for queue-devstack: one stack per worker, started lazily and stopped with the worker;
 * each test gets it back in a clean state (or in its `stackFixture`'s state) in milliseconds, by a
 * revert of chain and operation store together. Tests of one file run one after the other on it: do
 * not mark them `concurrent`.
 */
const fixtureValues = new WeakMap<DevStack, unknown>();
/**
 * Accounts impersonated through the testClient fixture: anvil keeps impersonations across a revert, and
 * auto-impersonation (anvil_autoImpersonateAccount), recorded as AUTO.
 */
const impersonated = new WeakMap<DevStack, Set<string>>();
const AUTO = "auto";

/** Records impersonations made through the testClient, so that the next test's reset undoes them. */
function recordImpersonations(stack: DevStack) {
  const accounts = impersonated.get(stack) ?? new Set<string>();
  impersonated.set(stack, accounts);
  return (_request: Request, init: RequestInit) => {
    if (typeof init.body !== "string") return;
    const body = JSON.parse(init.body) as { method: string; params?: unknown[] } | Array<{ method: string; params?: unknown[] }>;
    for (const call of Array.isArray(body) ? body : [body]) {
      const account = String(call.params?.[0] ?? "").toLowerCase();
      if (/^(anvil|hardhat)_impersonateAccount$/.test(call.method)) accounts.add(account);
      if (/^(anvil|hardhat)_stopImpersonatingAccount$/.test(call.method)) accounts.delete(account);
      if (/^(anvil|hardhat)_autoImpersonateAccount$/.test(call.method)) accounts[call.params?.[0] === true ? "add" : "delete"](AUTO);
    }
  };
}

async function stopImpersonations(stack: DevStack): Promise<void> {
  const accounts = impersonated.get(stack);
  if (!accounts || accounts.size === 0) return;
  const calls = [...accounts].map((account, id) =>
    account === AUTO ? { jsonrpc: "2.0", id, method: "anvil_autoImpersonateAccount", params: [false] } : { jsonrpc: "2.0", id, method: "anvil_stopImpersonatingAccount", params: [account] },
  );
  await fetch(stack.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(calls) });
  accounts.clear();
}

export const test: TestAPI<StackFixtures> = base.extend<StackFixtures>({
  devStackOptions: [{}, { scope: "worker", injected: true }],
  stackFixture: [null, { injected: true }],
  workerStack: [
    async ({ devStackOptions }, use) => {
      const stack = await startDevStack(devStackOptions);
      try {
        await use(stack);
      } finally {
        await stack.stop();
      }
    },
    { scope: "worker" },
  ],
  stack: async ({ workerStack, stackFixture, onTestFailed }, use) => {
    // At the start, not the end, of a test: a run of tests naming one fixture restores it directly,
    // and the first test in a worker finds its stack as it started.
    await stopImpersonations(workerStack);
    const value = stackFixture === null ? await workerStack.reset() : await workerStack.loadFixture(stackFixture.setup);
    fixtureValues.set(workerStack, value);
    const startedAt = new Date().toISOString();
    // A failing test's report carries the stack's side of the story: what this test relayed, and the
    // last lines of anvil's and the runtime's logs.
    onTestFailed(() => {
      // On stderr, which vitest prints under the failing test (an annotation cannot be added once it failed).
      console.error(diagnosticsText(workerStack.diagnostics(startedAt)));
    });
    await use(workerStack);
  },
  fixture: async ({ stack }, use) => use(fixtureValues.get(stack)),
  manifest: async ({ stack }, use) => use(stack.manifest),
  accounts: async ({ stack }, use) => use(stack.accounts),
  chain: async ({ stack }, use) => use(sepoliaAt(stack.rpcUrl)),
  publicClient: async ({ chain }, use) => use(createPublicClient({ chain, transport: http() }) as PublicClient),
  walletClient: async ({ chain, accounts }, use) =>
    use(createWalletClient({ account: privateKeyToAccount((accounts[1] as DevAccount).privateKey), chain, transport: http() })),
  testClient: async ({ chain, stack }, use) => use(createTestClient({ mode: "anvil", chain, transport: http(undefined, { onFetchRequest: recordImpersonations(stack) }) })),
  queue: async ({ stack }, use) => use(createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) })),
});

export { defineStackFixture, type StackFixture };
export { expect, describe, beforeAll, afterAll, beforeEach, afterEach } from "vitest";
export type { DevStack, DevStackOptions, StackSnapshot } from "../index.ts";
