import type { Address } from "viem";
import type { DeploymentConfig } from "../src/config/deployment-config.ts";
import type { ProofSystemName } from "../src/chain/dev-proof.ts";
import type { PatchedContract } from "../src/config/patched-contract.ts";
import type { LeftoverReport } from "./state-dir/index.ts";
import type { StackInfo } from "./stack-info/index.ts";
import type { DevAccount, ForkPoint, RpcFaultSpec, RpcFaultState } from "./chain/index.ts";
import type { ActionControls, ServedDeployment } from "./dev/index.ts";
import type { StackSnapshot } from "./snapshot/index.ts";
import type { Trace } from "./trace/index.ts";
import type { PatchResult } from "./patch/index.ts";
import type { ReplayAnswer, ReplayOptions } from "./replay/index.ts";

// What startDevStack returns: the stack, its faults and its diagnostics.
export interface DevStack {
  mode: "local" | "fork";
  /** What the Pool's verifier expects (the manifest's queue.proof.system): "dev" means dev proofs, nothing proved. */
  proofs: ProofSystemName;
  rpcUrl: string;
  queueUrl: string;
  manifest: DeploymentConfig;
  manifestPath: string;
  stackInfoPath: string;
  stateDir: string;
  info: StackInfo;
  /** Funded accounts with their keys (anvil's well-known test keys), relayer excluded. */
  accounts: DevAccount[];
  relayer: { address: Address };
  /** anvil's PID. */
  chainPid: number;
  fork: ForkPoint | null;
  /** A stack left in the state dir by a killed run, and what was done about it. */
  leftover: LeftoverReport;
  /**
   * This moment of the stack — the chain and the queue's operation store together — to revert to
   * later. anvil's rule holds: reverting to a snapshot drops every snapshot taken after it.
   */
  snapshot(): Promise<StackSnapshot>;
  /** Back to a snapshot, in milliseconds, with no process restarted; the snapshot stays usable. */
  revert(snapshot: StackSnapshot): Promise<void>;
  /**
   * Back to the stack as it was when it started (a revert to the snapshot taken then). It cannot be lost:
   * when anvil's snapshot is gone (a reorg replaced its block), the chain dumped at start is reloaded.
   */
  reset(): Promise<void>;
  /**
   * Hardhat's loadFixture for the whole stack: the first call (per setup function) runs `setup` from the
   * clean state and snapshots the result; later calls revert to that snapshot. A reset (or a revert to
   * an older snapshot) drops it, and its next use runs the setup again; so does a reorg that replaced its block.
   */
  loadFixture<T>(setup: (stack: DevStack) => Promise<T>): Promise<T>;
  /**
   * What helps explain a failure: anvil's last output lines, the runtime's last log lines (unless a
   * logger was given), and the operations accepted since `since` (ISO 8601) with their states.
   */
  diagnostics(since?: string): StackDiagnostics;
  /**
   * The call trace of an operation, named and decoded: its mined transaction (a revert shows the Pool's
   * custom error and where it came from), or, for one never mined, its call replayed at the latest block.
   */
  trace(operationId: string): Promise<Trace>;
  /**
   * Replaces a deployed contract's runtime code in place (anvil_setCode: storage, address and balance
   * kept). `contract`: Pool, verifier, registry, directory, an asset's symbol, or an address. `source`: a
   * .sol file (compiled with the npm solc, offline), a Hardhat artifact, build-info or compiler output
   * (`file:Contract` picks one). Refused (PatchError, the stack as it was) when the new code moves or
   * retypes a storage variable or changes an immutable. The manifest's code hash, the runtime, stack.json
   * and the health follow. A patch is part of the stack's baseline: reset and revert keep it.
   */
  patch(contract: string, source: string): Promise<PatchResult>;
  /**
   * The contract's code as the stack started with it again: a loaded bundle's patched code, else (or once
   * that is back) the code from before its first patch.
   */
  unpatch(contract: string): Promise<PatchResult>;
  /** The contracts patched now, and with what. */
  patches(): PatchedContract[];
  /**
   * Replays a stored operation: its exact request through the relayer's admission checks and simulation
   * on the chain as it is now (a patched contract, a changed slot) or at `options.at`, its call trace
   * diffed against the original's; `send` relays it again, as a new operation linked to the original.
   * Rejects with a ProblemError whose `code` says why it cannot be judged (operation_not_found,
   * operation_live, not_replayable, block_not_found, chain_unavailable). See docs/replay.md.
   */
  replay(operationId: string, options?: ReplayOptions): Promise<ReplayAnswer>;
  /** Writes a repro bundle of this stack to `file`: chain (a fork's touched state included), manifest and operations; no key or credential. */
  save(file: string): Promise<{ bytes: number }>;
  /** The fixture action routes: set a price, fill an async reservation (or don't), let a deadline pass. */
  actions: ActionControls;
  /** Faults a client must survive, injected between the runtime and anvil (see the README's Faults). */
  faults: StackFaults;
  stop(): Promise<void>;
}

export interface StackFaults {
  /** The RPC as the runtime sees it, faults included: point a client at it to see them too. */
  rpcUrl: string;
  /** Makes the runtime's RPC fail, time out, answer late or lose logs (null: behave again). */
  rpc(fault: RpcFaultSpec | null): RpcFaultState;
  /** The next relay broadcast is mined and reverts (the verifier rejects its proof); false disarms. */
  revertNextRelay(armed?: boolean): RpcFaultState;
  state(): RpcFaultState;
  /** RPC faults and revert-next off (a revert or a reset also goes back to the original deployment). */
  clear(): void;
  /**
   * Serve another deployment from the queue URL (spec rules 7 and 8: the configuration changes while a
   * payment is pending), or the original again. The old deployment's runtime keeps settling what it
   * accepted, and answers status for it.
   */
  serve(which: ServedDeployment): Promise<{ serving: ServedDeployment; poolAddress: string }>;
  serving(): ServedDeployment;
}

export interface StackDiagnostics {
  anvil: string[];
  runtime: string[];
  operations: Array<{ id: string; kind: string; state: string; reason: string | null; transactionHash: string | null; createdAt: string }>;
}
