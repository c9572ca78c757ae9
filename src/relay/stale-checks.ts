import type { LocalAccount, PublicClient } from "viem";
import { simulateChecked, simulateRelay } from "../admission/action-checks.ts";
import { checkRelayerReady } from "../admission/chain-checks.ts";
import type { CheckContext } from "../admission/check-context.ts";
import { checkFinalizeFee, checkReservation } from "../admission/finalize-checks.ts";
import type { Fees } from "../chain/fees.ts";
import type { RelaySettings } from "../config/relay-settings.ts";
import { ProblemError } from "../problem.ts";
import { TERMINAL_STATES } from "../schemas/operation.ts";
import type { OperationRecord, OperationStore } from "../store/types.ts";

export interface Prepared {
  ready: PromiseSettledResult<Fees>;
  fresh: PromiseSettledResult<void>;
  /** The node's pending transaction count for the relayer. */
  pending: PromiseSettledResult<number>;
  /** When the checks it relies on read the chain (epoch ms): the admission's, or these. */
  checkedAt: number;
}

/**
 * The engine's checks that go stale (root, nullifiers, simulation, a finalize's reservation and fee),
 * read again before a signature unless read within resimulateAfterMs, and when each was last read.
 */
export class StaleChecks {
  private readonly deps: { store: OperationStore; chain: PublicClient; account: LocalAccount; checks: CheckContext; settings: RelaySettings };
  /** When each newly admitted operation's admission read the chain (epoch ms): taken by its first prepare. */
  private readonly admittedAt = new Map<string, number>();
  /**
   * When each signed operation was last checked (root, nullifiers, simulation; epoch ms): a fee bump signs
   * again, so one not checked within resimulateAfterMs is checked first. Empty after a restart, a load or
   * a pause: an operation picked up from the store is always checked before it is bumped.
   */
  private readonly lastChecked = new Map<string, number>();
  /** Operations whose fee bump was withheld (the call would now revert), noted once in their history. */
  private readonly withheld = new Set<string>();

  constructor(deps: StaleChecks["deps"]) {
    this.deps = deps;
  }

  /** `checkedAt` (epoch ms): no later than the admission's reads of the chain. */
  admitted(id: string, checkedAt: number): void {
    this.admittedAt.set(id, checkedAt);
  }

  /** Signed on checks read at `checkedAt` (epoch ms). */
  signed(id: string, checkedAt: number): void {
    this.lastChecked.set(id, checkedAt);
  }

  /** Notes a withheld fee bump: true the first time for an operation (its history says it once). */
  withhold(id: string): boolean {
    if (this.withheld.has(id)) return false;
    this.withheld.add(id);
    return true;
  }

  /** The operation ended: nothing of it is checked again. */
  ended(id: string): void {
    this.lastChecked.delete(id);
    this.withheld.delete(id);
  }

  /** A read started before a pause counts a chain that may be reverted: none after it shares it. */
  dropPendingRead(): void {
    this.pendingRead = undefined;
  }

  /** Everything read so far (a pause: the chain may be reverted). */
  forget(): void {
    this.admittedAt.clear();
    this.lastChecked.clear();
    this.withheld.clear();
  }

  /** The re-checks that can go stale and the relayer's readiness, read side by side, before the writer's turn. */
  async prepare(id: string): Promise<Prepared | null> {
    const { store, checks } = this.deps;
    // Once: a later prepare of it (not ready yet, say) reads the chain again.
    const checkedAt = this.admittedAt.get(id);
    this.admittedAt.delete(id);
    const op = store.get(id);
    if (!op || TERMINAL_STATES.has(op.state) || op.attempts.length > 0) return null;
    // Measured from the admission's reads, not from its acceptance: an admission held between the two
    // (a busy process) may have read the chain before a twin of it was mined.
    const recent = checkedAt !== undefined && Date.now() - checkedAt < this.deps.settings.resimulateAfterMs;
    const readAt = Date.now();
    const [ready, fresh, pending] = await Promise.allSettled([
      checkRelayerReady(checks),
      // Its admission read root, nullifiers and simulation moments ago.
      recent ? undefined : this.recheck(op),
      this.pendingCount(),
    ]);
    return { ready, fresh, pending, checkedAt: recent ? checkedAt : readAt };
  }

  /** The relayer's pending transaction count being read, if one is. */
  private pendingRead: Promise<number> | undefined;

  /**
   * The node's pending transaction count for the relayer. Operations prepared at the same moment (a burst)
   * share one read, started no earlier than one round trip before it asked: another user's transaction
   * sent meanwhile is as likely missed by a read of its own (the writer takes the larger of this and the
   * store's next nonce, and a nonce taken anyway is found by the watcher).
   */
  private pendingCount(): Promise<number> {
    if (!this.pendingRead) {
      const read: Promise<number> = this.deps.chain.getTransactionCount({ address: this.deps.account.address, blockTag: "pending" }).finally(() => {
        if (this.pendingRead === read) this.pendingRead = undefined;
      });
      this.pendingRead = read;
    }
    return this.pendingRead;
  }

  /**
   * The checks that can go stale: the Pool's simulation, which decides the root and nullifiers too (read on
   * their own when it fails: simulateRelay); a finalize's reservation, and whether its fee is still surely
   * this relayer's (a finalizer's window closes), then its simulation.
   */
  private async recheck(op: OperationRecord): Promise<void> {
    const { checks, store } = this.deps;
    const request = op.request;
    if (!("reservationId" in request)) return simulateRelay(checks, request);
    await checkFinalizeFee(checks, request, await checkReservation(checks, request), store);
    await simulateChecked(checks, request);
  }

  /**
   * A fee bump signs the operation's call again: checked again first (outside the writer, as before its
   * first signature) unless that was within resimulateAfterMs. "ok", the problem that would make it revert
   * now, or "chain unavailable" (decided on a later tick).
   */
  async beforeBump(op: OperationRecord): Promise<"ok" | "chain unavailable" | ProblemError> {
    const checkedAt = this.lastChecked.get(op.id);
    if (checkedAt !== undefined && Date.now() - checkedAt < this.deps.settings.resimulateAfterMs) return "ok";
    const readAt = Date.now();
    try {
      await this.recheck(op);
    } catch (error) {
      return error instanceof ProblemError && error.code !== "chain_unavailable" ? error : "chain unavailable";
    }
    this.lastChecked.set(op.id, readAt);
    this.withheld.delete(op.id);
    return "ok";
  }
}
