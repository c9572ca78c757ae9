import type { Address, Hex, PublicClient } from "viem";
import { actionReadAbi } from "./abi.ts";

export type ReservationState = "none" | "pending" | "settled" | "failed" | "finalized" | "expired";
const STATES = ["none", "pending", "settled", "failed", "finalized"] as const;

/**
 * A reservation as the Pool has it now, with its state as a client should read it: `expired` is a
 * pending one past its deadline (its fill can no longer come; finalize refunds it).
 */
export async function readReservation(chain: PublicClient, pool: Address, reservationId: Hex) {
  const [r, block] = await Promise.all([chain.readContract({ address: pool, abi: actionReadAbi, functionName: "reservations", args: [reservationId] }), chain.getBlock()]);
  const onChain = STATES[r[10]] ?? "none";
  const state: ReservationState = onChain === "pending" && block.timestamp > r[6] ? "expired" : onChain;
  return {
    state,
    routeId: r[0],
    inputAsset: r[1],
    amountIn: r[2],
    outputAsset: r[3],
    minOutput: r[4],
    precommitment: r[5],
    amountOut: r[8],
    deadline: r[6],
    finalizeFee: r[7],
    finalizer: r[11],
    blockTimestamp: block.timestamp,
  };
}

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
    readReservation(this.deps.chain, this.deps.pool, reservationId as Hex)
      .then(({ state }) => this.known.set(reservationId, { state, observedAt: Date.now() }))
      .catch(() => {})
      .finally(() => this.refreshing.delete(reservationId));
  }
}
