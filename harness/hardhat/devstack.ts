import type { Address } from "viem";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import type { DevAccount } from "../chain/index.ts";
// The queue client alone, not the client's door: a connection needs no note, key or tree code (~110 ms to import).
import { createQueueClient, reviewedFrom, type QueueClient } from "../client/queue-client.ts";
import { DEVSTACK_NETWORK } from "./names.ts";
import type { PluginSnapshot, WorkerStack } from "./stacks.ts";

/** What `network.create("devstack")` puts on the connection as `devstack`. */
export interface HardhatDevStack {
  readonly manifest: DeploymentConfig;
  readonly manifestPath: string;
  /** stack.json: URLs, PIDs, accounts (see the README's State files). */
  readonly stackInfoPath: string;
  readonly stateDir: string;
  /** The queue's {base_url}. */
  readonly queueUrl: string;
  /** anvil's URL: the devstack network's. */
  readonly rpcUrl: string;
  readonly chainPid: number;
  /** Funded dev accounts with their keys (anvil's well-known test keys), relayer excluded. */
  readonly accounts: readonly DevAccount[];
  /** The queue's relayer: one of anvil's accounts too, so one of the connection's wallet clients; leave it to the queue. */
  readonly relayer: { readonly address: Address };
  /** The typed queue client, its reviewed deployment taken from this stack's manifest. */
  readonly queue: QueueClient;
  /** Chain and operation store as they were when the stack started, in milliseconds (call it in beforeEach). */
  reset(): Promise<void>;
  /** This moment of chain and queue, to revert to; reverting drops the snapshots taken after it (anvil's rule). */
  snapshot(): Promise<PluginSnapshot>;
  revert(snapshot: PluginSnapshot): Promise<void>;
  /**
   * networkHelpers.loadFixture for the whole stack: the first call per setup function runs it from the
   * clean state and snapshots chain and queue; later calls revert to that snapshot and return the same
   * value. A reset (or a revert to an older snapshot) drops it, and its next use runs the setup again.
   */
  loadFixture<T>(setup: () => Promise<T>): Promise<T>;
}

export function hardhatDevStack(stack: WorkerStack): HardhatDevStack {
  const { stop: _owned, ...rest } = stack;
  return Object.freeze({ ...rest, queue: createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) }) });
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
