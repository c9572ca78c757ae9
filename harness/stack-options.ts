import type { FastifyServerOptions } from "fastify";
import type { QueueRuntimeOptions } from "../src/server.ts";
import type { RelaySettings } from "../src/config/relay-settings.ts";
import type { ProofSystemName } from "../src/chain/dev-proof.ts";
import type { ProgressListener } from "./part/index.ts";

/**
 * What startDevStack takes. Each part of the stack takes the options it reads as a
 * `Pick<DevStackOptions, …>`: their documentation and defaults are written here once.
 */
export interface DevStackOptions {
  /**
   * Interface for anvil and the queue runtime.
   * @defaultValue "127.0.0.1"
   */
  host?: string;
  /**
   * anvil's port; 0 picks a free one.
   * @defaultValue 0
   */
  chainPort?: number;
  /**
   * The queue runtime's port; 0 picks a free one.
   * @defaultValue 0
   */
  queuePort?: number;
  /**
   * Where manifest.json and stack.json go.
   * @defaultValue a fresh temp dir, removed by stop()
   */
  stateDir?: string;
  /** Fork this RPC (it must be Sepolia) instead of starting an empty chain. */
  forkUrl?: string;
  /**
   * Fork at this block.
   * @defaultValue the upstream's latest, resolved once and pinned
   */
  forkBlockNumber?: bigint | number;
  /**
   * Where the fork upstream's immutable answers are kept, to replay a fork at a pinned block without the
   * network.
   * @defaultValue ~/.cache/queue-devstack/fork-rpc, or $XDG_CACHE_HOME/queue-devstack/fork-rpc
   */
  forkCacheDir?: string;
  /** Pin this existing Pool (fork mode) instead of deploying the fixtures. */
  pool?: string;
  /**
   * The pinned Pool's deployment block.
   * @defaultValue found on the chain
   */
  deploymentBlock?: bigint | number;
  /**
   * What the Pool's verifier expects. "groth16": real proofs. "dev": DEVELOPMENT ONLY, the
   * Pool is verified by DevVerifier, which accepts a dev proof (a tag and a hash binding the verifier,
   * the chain id and every public input); clients still compute the full witness, so every circuit
   * constraint is checked, but nothing is proved. Refused with `pool` (a pinned Pool's verifier is
   * real); a resumed or loaded stack keeps the mode it was saved with.
   * @defaultValue $QUEUE_DEVSTACK_PROOFS when set (a suite's switch; ignored with `pool`), else "groth16"
   */
  proofs?: ProofSystemName;
  /** Called after each start-up step, with its duration. */
  onProgress?: ProgressListener;
  /**
   * Keep the chain in `<stateDir>/chain-state.json` (saved on every new block and on stop), and resume
   * from it (same blocks, same Pool, same manifest, same operation store) when it starts again, also
   * after a crash. Local mode only: a fork is reproduced by its pinned block.
   * @defaultValue false
   */
  persist?: boolean;
  /**
   * Start from a repro bundle (stack.save): the same chain, manifest and operations, in a fresh state
   * dir. A fork stack's bundle loads as a local chain holding the forked state it touched (no upstream
   * needed). Without forkUrl or pool; a bundle of another format version, or a damaged one, is refused (BundleError).
   * Its live operations wait, the relayer paused, until it is resumed (POST /api/dev/relayer, ctl relayer resume).
   */
  load?: string;
  /**
   * Host names the dev routes (/api/dev/*) also answer to, besides localhost, *.localhost, 127.0.0.0/8,
   * [::1] and the bound address: a name (devbox.local), an IP address, or ".name" for a name and its
   * subdomains. Any other Host is refused with 403 host_not_allowed (DNS rebinding protection).
   * @defaultValue []
   */
  allowedHosts?: readonly string[];
  /**
   * Relayer behaviour (confirmations, fee cap, timings); defaults suit a dev chain. A dev stack's
   * `keepRejected` is 300: a submission the chain refuses is kept as a `rejected` operation, which the
   * refusal names (`operationId`).
   */
  relay?: Partial<RelaySettings>;
  /**
   * Browser origins allowed to call the queue (CORS): "loopback" is a front end on any
   * localhost port; add exact origins (a tunnel's, say) or pass [] for none. The exact origins may drive
   * the dev controls too; besides them, only the stack's own pages and loopback origins may: another
   * site's page is refused (403 cross_origin_refused), with or without a body.
   * @defaultValue ["loopback"]
   */
  corsOrigins?: readonly string[];
  /** The runtime's timeouts (see the README's Timeouts); defaults as buildQueueRuntime's. */
  runtime?: Pick<QueueRuntimeOptions, "chainTimeoutMs" | "requestTimeoutMs" | "headersTimeoutMs" | "quotes" | "rateLimit">;
  /**
   * The operation store: ":memory:" for tests that want it.
   * @defaultValue `<stateDir>/queue.sqlite` (durable)
   */
  store?: string;
  /**
   * Fastify logger option for the runtime, e.g. `{ level: "info", stream: process.stderr }`.
   * @defaultValue the last 40 lines at level info kept in memory for `diagnostics()`, nothing printed
   */
  logger?: FastifyServerOptions["logger"];
  /**
   * Contracts to patch in place once deployed, pinned or loaded, before the runtime starts, each as
   * `<contract>=<path>` (`Pool=contracts/Pool.sol`): see DevStack.patch.
   * @defaultValue []
   */
  patch?: readonly string[];
  /**
   * Gives up the start (as fetch's or execa's `signal`): when it aborts — a Ctrl-C, a test's timeout —
   * the step under way stops (a bundle's unpacking, anvil's start) or the next does not begin, every part
   * started so far is stopped, the state dir is left as it was found, and startDevStack rejects with
   * `signal.reason` (an AbortError unless another reason was given). A stack that has started is not
   * stopped by it: stop() does that.
   */
  signal?: AbortSignal;
}
