import { ProblemError } from "../../src/problem.ts";
import type { RelayControl } from "../../src/relay/control.ts";
import { JsonRpcError, jsonRpc, type RpcFaultProxy } from "../chain/index.ts";
import type { ControlLock } from "../snapshot/index.ts";
import type { Trace } from "../trace/index.ts";
import type { Replayer } from "../replay/index.ts";
import type { DeploymentSwitch } from "./deployment-switch.ts";

// What every dev route group shares: the prefix, what the groups are given, the OpenAPI wording of a
// dev-only route, and anvil's calls answered as problems.

/** The dev controls' prefix: present in a dev stack only, never in an operator's runtime (src/ has none). */
export const DEV_PREFIX = "/api/dev";

export interface DevDeps {
  /** The dev controls one at a time (with the stack's own snapshot, revert, reset, save and serve). */
  lock: ControlLock;
  rpcUrl: string;
  relayer: `0x${string}`;
  control: RelayControl | null;
  /** The proxy between the runtime and anvil that injects RPC faults. */
  faults: RpcFaultProxy;
  /** An operation's call trace (stack.trace), or undefined for an unknown id. */
  trace: (operationId: string) => Promise<Trace | undefined>;
  /** Which deployment the queue URL serves. */
  deployments: DeploymentSwitch;
  /** The stack's repro bundle, taken now (stack.save's bytes). */
  bundle: () => Promise<Uint8Array>;
  /** The dev accounts (stack.accounts), for the dashboard's balances. */
  accounts: ReadonlyArray<{ address: `0x${string}`; anvilIndex: number }>;
  /** Replays of stored operations (stack.replay). */
  replayer: Replayer;
  /** Back to the stack's clean state (stack.reset); undefined until the stack's snapshots are ready. */
  reset: () => (() => Promise<void>) | undefined;
}

/** anvil's refusal of a control is the chain's answer, not a bug: a 503 problem, not a 500. */
export const rpc = <T>(url: string, method: string, params: unknown[] = []) =>
  jsonRpc<T>(url, method, params).catch((error: unknown) => {
    throw error instanceof JsonRpcError ? new ProblemError("chain_unavailable", error.message) : error;
  });

export const describeDev = (summary: string, description: string) => ({ tags: ["development only"], summary: `Development only: ${summary}`, description: `${description} Present in a dev stack only (never in an operator's runtime), and only for loopback clients under a loopback or allowed Host name (403 host_not_allowed otherwise); a change asked from another site's page is refused (403 cross_origin_refused).` });
