import { parseGwei } from "viem";

/** How the relayer behaves. Defaults suit a dev chain (automine, one confirmation). */
export interface RelaySettings {
  /** Blocks on top of (and including) the inclusion block before an operation is confirmed. */
  requiredConfirmations: number;
  /** Gas limit of a Pool.transact: set, not estimated (eth_estimateGas is wrong for snarkjs verifiers). */
  gasLimit: bigint;
  /** Refuse new operations (503) while the fee the relayer would offer exceeds this. */
  maxFeePerGasCap: bigint;
  /** Refuse new operations (503) while this many are live. */
  maxLiveOperations: number;
  /**
   * One client's share of maxLiveOperations (clients by IP, an IPv6 one by its /64, as the rate limit
   * counts them): past it, its new relays and finalizes are 429 too_many_in_flight while the others'
   * still go in.
   */
  maxLivePerClient: number;
  /** How often pending transactions are checked. */
  pollIntervalMs: number;
  /** A transaction not mined this long after its broadcast is replaced with a fee bump. */
  stuckAfterMs: number;
  /** Percentage a replacement raises both fee fields by (nodes want at least 10). */
  feeBumpPercent: number;
  /** An operation not broadcast this long after acceptance expires (nothing was sent). */
  maxWaitMs: number;
  /**
   * Before signing, the relayer's funds and fees are read again; the root, nullifiers and the whole
   * transaction's simulation only when the admission's reads of them are older than this, or unknown
   * (after a restart). A simulation runs the verifier's pairing: under load, the relay's costliest read.
   */
  resimulateAfterMs: number;
  /** Timeout of each of the engine's own chain calls (reads, broadcasts); requests have their own (chainTimeoutMs). */
  rpcTimeoutMs: number;
  /**
   * How many submissions refused by a check of the chain (the Pool's simulation, the root, a reservation)
   * are kept as `rejected` operations, newest first, each named by its refusal's `operationId`: a dev
   * stack's repro material (replay, trace, bundles). 0, an operator's default: none is kept.
   */
  keepRejected: number;
}

export const DEFAULT_RELAY_SETTINGS: RelaySettings = {
  requiredConfirmations: 1,
  gasLimit: 3_000_000n,
  maxFeePerGasCap: parseGwei("500"),
  maxLiveOperations: 64,
  maxLivePerClient: 16,
  pollIntervalMs: 200,
  stuckAfterMs: 4_000,
  feeBumpPercent: 25,
  maxWaitMs: 120_000,
  resimulateAfterMs: 2_000,
  rpcTimeoutMs: 10_000,
  keepRejected: 0,
};

/** Relayer settings over the defaults, checked: a NaN would silently stop confirmations or bumps. */
export function relaySettings(overrides: Partial<RelaySettings> = {}): RelaySettings {
  const settings = { ...DEFAULT_RELAY_SETTINGS, ...overrides };
  for (const [name, value] of Object.entries(settings)) {
    const ok = typeof value === "bigint" ? value > 0n : Number.isInteger(value) && value >= 0;
    if (!ok) throw new RangeError(`relay setting ${name} must be a non-negative integer, got ${String(value)}`);
  }
  if (settings.requiredConfirmations < 1) throw new RangeError("relay setting requiredConfirmations must be at least 1");
  return settings;
}
