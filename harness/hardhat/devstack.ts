import type { Address } from "viem";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import type { DevAccount } from "../chain/index.ts";
// The queue client alone, not the client's door: that loads the prover (snarkjs), which a Hardhat run does not need.
import { createQueueClient, reviewedFrom, type QueueClient } from "../client/queue-client.ts";
import type { DevStack, StackSnapshot } from "../index.ts";
import { DEVSTACK_NETWORK } from "./names.ts";

/** What `network.connect("devstack")` puts on the connection as `devstack`. */
export interface HardhatDevStack {
  /** The whole stack, as startDevStack returns it (faults, actions, trace, save, diagnostics…); the plugin stops it. */
  readonly stack: Omit<DevStack, "stop">;
  readonly manifest: DeploymentConfig;
  readonly manifestPath: string;
  /** The queue's {base_url}. */
  readonly queueUrl: string;
  /** anvil's URL: the devstack network's. */
  readonly rpcUrl: string;
  /** Funded dev accounts with their keys (anvil's well-known test keys), relayer excluded: the connection's wallet clients are theirs. */
  readonly accounts: readonly DevAccount[];
  readonly relayer: { readonly address: Address };
  /** The typed queue client, its reviewed deployment taken from this stack's manifest. */
  readonly queue: QueueClient;
  /** Chain and operation store as they were when the stack started, in milliseconds (call it in beforeEach). */
  reset(): Promise<void>;
  snapshot(): Promise<StackSnapshot>;
  revert(snapshot: StackSnapshot): Promise<void>;
  /**
   * networkHelpers.loadFixture for the whole stack: the first call per setup function runs it from the
   * clean state and snapshots the result; later calls revert to that snapshot (chain and queue together).
   */
  loadFixture<T>(setup: (stack: Omit<DevStack, "stop">) => Promise<T>): Promise<T>;
}

export function hardhatDevStack(stack: DevStack): HardhatDevStack {
  const { stop: _owned, ...rest } = stack;
  return Object.freeze({
    stack: rest,
    manifest: stack.manifest,
    manifestPath: stack.manifestPath,
    queueUrl: stack.queueUrl,
    rpcUrl: stack.rpcUrl,
    accounts: stack.accounts,
    relayer: stack.relayer,
    queue: createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) }),
    reset: () => stack.reset(),
    snapshot: () => stack.snapshot(),
    revert: (snapshot: StackSnapshot) => stack.revert(snapshot),
    loadFixture: <T>(setup: (stack: Omit<DevStack, "stop">) => Promise<T>) => stack.loadFixture(setup),
  });
}

/** On a connection to another network, `devstack` says which network has it rather than being undefined. */
export function noDevStackOn(networkName: string): PropertyDescriptor {
  return {
    get() {
      throw new Error(`queue-devstack: the connection to "${networkName}" has no stack; connect to "${DEVSTACK_NETWORK}" (network.connect("${DEVSTACK_NETWORK}"))`);
    },
    enumerable: false,
    configurable: true,
  };
}
