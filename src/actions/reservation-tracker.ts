import type { Address, Hex, PublicClient } from "viem";
import { actionReadAbi } from "../chain/abi.ts";

export type ReservationState = "none" | "pending" | "settled" | "failed" | "finalized" | "expired";
const STATES = ["none", "pending", "settled", "failed", "finalized"] as const;

export interface ObservedReservation {
  state: ReservationState;
  /** When the runtime read it (epoch ms): status answers never wait on the chain, so they say how old it is. */
  observedAt: number;
}

/** A reservation read older than this is refreshed in the background the next time someone looks. */
const FRESH_MS = 1_000;

/**
 * The last state of each reservation the runtime read, for status answers, which must not wait on the
 * chain (as the head tracker for confirmations): a stale one is re-read in the background.
 */
export class ReservationTracker {
  private readonly known = new Map<string, ObservedReservation>();
  private readonly refreshing = new Set<string>();
  private readonly deps: { chain: PublicClient; pool: Address };

  constructor(deps: { chain: PublicClient; pool: Address }) {
    this.deps = deps;
  }

  current(reservationId: string): ObservedReservation | null {
    const known = this.known.get(reservationId);
    if (!known || Date.now() - known.observedAt > FRESH_MS) this.refresh(reservationId);
    return known ?? null;
  }

  /** Forgets what was read (the chain was reverted under it). */
  forget(): void {
    this.known.clear();
  }

  private refresh(reservationId: string): void {
    if (this.refreshing.has(reservationId)) return;
    this.refreshing.add(reservationId);
    const { chain, pool } = this.deps;
    Promise.all([chain.readContract({ address: pool, abi: actionReadAbi, functionName: "reservations", args: [reservationId as Hex] }), chain.getBlock()])
      .then(([r, block]) => {
        const state: ReservationState = STATES[r[10]] ?? "none";
        this.known.set(reservationId, { state: state === "pending" && block.timestamp > r[6] ? "expired" : state, observedAt: Date.now() });
      })
      .catch(() => {})
      .finally(() => this.refreshing.delete(reservationId));
  }
}
