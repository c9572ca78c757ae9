import type { FastifyInstance } from "fastify";
import type { PublicClient } from "viem";
import type { ProblemError } from "../problem.ts";
import type { OperationKind } from "../schemas/operation.ts";
import type { FinalizeRequest, RelayRequest } from "../schemas/request.ts";
import type { Relayer } from "./relayer.ts";
import type { OperationPage, OperationRecord, StoreCheckpoint } from "../store/types.ts";

/**
 * What a test harness needs to move a runtime together with its chain (snapshot and revert): pause the
 * relayer at a step boundary, copy its operation store, and put the copy back. Not an HTTP route: only
 * code in the runtime's own process, which owns the relayer key, can reach it.
 */
export interface RelayControl {
  /**
   * The engine stops at a step boundary; nothing is signed, broadcast or watched until every holder
   * that paused it has resumed it ("harness" for a snapshot's brief pause, "dev" for the dev control).
   */
  pause(holder?: string): Promise<void>;
  /** Releases a holder's pause; the last one out restarts the engine from the store, as after a restart. */
  resume(holder?: string): void;
  paused(): boolean;
  /**
   * Until the returned function is called, admissions answer 503 chain_reverting (Retry-After), and one
   * that began before answers so too instead of being stored: the harness is reverting chain and store.
   */
  holdAdmissions(): () => void;
  checkpoint(): StoreCheckpoint;
  /** Puts the store back as it was at the checkpoint. Only while paused. */
  restore(checkpoint: StoreCheckpoint): void;
  release(checkpoint: StoreCheckpoint): void;
  /** A consistent copy of the operation store in a new file (only while paused, to match the chain). */
  backupStore(file: string): void;
  /** One operation as stored (for a trace). */
  operation(id: string): OperationRecord | undefined;
  /** Operations accepted at or after this time (ISO 8601): what a test created, for its report. */
  operationsSince(at: string): OperationRecord[];
  /** A page of operations, newest first, filtered by the store (a dev page's list: it costs its page). */
  newestFirst(page: OperationPage): OperationRecord[];
  /** Our mined actions whose output note has this precommitment (by the store's index): a reservation's action. */
  minedActions(outputPrecommitment: string): OperationRecord[];
  /** Blocks a mined transaction needs before its operation is confirmed. */
  requiredConfirmations(): number;
  /** The gas limit the relayer sends its transactions with. */
  gasLimit(): bigint;
  /** What an admission would answer this request now, storing nothing (see Relayer.judge): a dev replay's question. */
  judge(kind: OperationKind, request: RelayRequest | FinalizeRequest, view?: { chain?: PublicClient; nowSeconds?: number }): Promise<{ admission: ProblemError | null; simulation: ProblemError | null }>;
  /** How many operations are in each kind and state (a dev page's counts; one GROUP BY). */
  stateCounts(): Array<{ kind: string; state: string; count: number }>;
  /** Told after every stored change: an operation's id, or null when many may have changed (a restore). Returns its removal. */
  onChange(listener: (operationId: string | null) => void): () => void;
}

const controls = new WeakMap<FastifyInstance, RelayControl>();

export function attachRelayControl(app: FastifyInstance, relayer: Relayer): void {
  const holders = new Set<string>();
  const paused = () => holders.size > 0;
  controls.set(app, {
    async pause(holder = "harness") {
      holders.add(holder);
      await relayer.engine.pause();
    },
    resume(holder = "harness") {
      holders.delete(holder);
      relayer.head.forget();
      relayer.reservations.forget();
      if (!paused()) relayer.engine.resume();
    },
    paused,
    holdAdmissions: () => relayer.holdAdmissions(),
    checkpoint: () => relayer.store.checkpoint(),
    restore(checkpoint) {
      if (!paused()) throw new Error("restore the operation store only while the relayer is paused");
      relayer.store.restore(checkpoint);
    },
    release: (checkpoint) => relayer.store.release(checkpoint),
    operationsSince: (at) => relayer.store.createdSince(at),
    newestFirst: (page) => relayer.store.newestFirst(page),
    minedActions: (precommitment) => relayer.store.minedActions(precommitment),
    requiredConfirmations: () => relayer.settings.requiredConfirmations,
    gasLimit: () => relayer.settings.gasLimit,
    judge: (kind, request, view) => relayer.judge(kind, request, view),
    stateCounts: () => relayer.store.stateCounts(),
    operation: (id) => relayer.store.get(id),
    onChange: (listener) => relayer.store.onChange(listener),
    backupStore(file) {
      if (!paused()) throw new Error("copy the operation store only while the relayer is paused");
      relayer.store.backupTo(file);
    },
  });
}

/** The relay control of a runtime built by buildQueueRuntime; null for one without a relayer key. */
export function relayControl(app: FastifyInstance): RelayControl | null {
  return controls.get(app) ?? null;
}
