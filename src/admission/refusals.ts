import { ProblemError, type ProblemCode } from "../problem.ts";
import { isTransportError } from "../chain/transport-error.ts";
import type { FinalizeRequest } from "../schemas/request.ts";

/**
 * The Pool's simulation runs its verifier: its InvalidProof() revert is the proof's verdict (one pairing
 * per admission, not two).
 */
export function provenOrSimulationError(error: unknown): unknown {
  const revert = error instanceof ProblemError && error.code === "simulation_failed" ? (error.extensions.revert as { name?: string } | undefined) : undefined;
  return revert?.name === "InvalidProof" ? new ProblemError("invalid_proof", "the proof does not verify for these public inputs") : error;
}

export function unknownRoot(root: string): ProblemError {
  return new ProblemError("unknown_root", `root ${root} is not among the Pool's recent roots: sync the tree and prove again`);
}

/** A nullifier spent on chain; by one of our own operations, when we know which. */
export function nullifierSpent(nullifier: string, operationId: string | undefined): ProblemError {
  return new ProblemError("nullifier_spent", `nullifier ${nullifier} is already spent on chain${operationId ? ` by operation ${operationId}` : ""}`, {
    extensions: operationId ? { nullifier, operationId } : { nullifier },
  });
}

export function nullifierInFlight(nullifier: string, operationId: string): ProblemError {
  return new ProblemError("nullifier_in_flight", `nullifier ${nullifier} is held by live operation ${operationId}`, { extensions: { nullifier, operationId } });
}

/**
 * A chain call that failed on the way to the node: 503, try again. Any other error is returned as it
 * is: a bug or a value viem cannot encode is no outage, and must not tell the client to retry (a 500).
 */
export function chainUnavailable(error: unknown): unknown {
  if (error instanceof ProblemError || !isTransportError(error)) return error;
  return new ProblemError("chain_unavailable", "the chain did not answer; try again", { headers: { "retry-after": "2" } });
}


/**
 * Refusals by what the chain holds (the Pool's simulation, the root, a reservation), marked as they leave
 * the checks that read it: a relayer that keeps refusals keeps those. Not the chain's outages nor the
 * relayer's own state (503, 429), nor a "not yet" (Retry-After: a reservation not settled): they say
 * nothing wrong of the request.
 */
const chainRefusals = new WeakSet<ProblemError>();
export function byTheChain(checks: Promise<void>): Promise<void> {
  return checks.catch((error: unknown) => {
    if (error instanceof ProblemError && error.status < 500 && error.status !== 429 && !("retry-after" in error.headers)) chainRefusals.add(error);
    throw error;
  });
}

/** Whether a refusal came of the chain's state (byTheChain). */
export const isChainRefusal = (refusal: ProblemError) => chainRefusals.has(refusal);

/** Refusals whose `operationId` already names another operation (the spender, the holder, the quote's user): never kept, so never ambiguous. */
export const NAMES_ANOTHER_OPERATION: ReadonlySet<ProblemCode> = new Set(["nullifier_spent", "nullifier_in_flight", "quote_used", "already_finalized", "idempotency_key_reused"]);

/** A quote admits one action: the one stored with it (a failure before broadcast released it). */
export function quoteUsed(quoteId: string, operationId: string): ProblemError {
  return new ProblemError("quote_used", `quote ${quoteId} was used by operation ${operationId}: ask POST quote for a new one and prove again`, {
    extensions: { quoteId, operationId },
  });
}

export function alreadyFinalized(request: FinalizeRequest, operationId: string): ProblemError {
  return new ProblemError("already_finalized", `reservation ${request.reservationId} is already finalized, by operation ${operationId}`, { extensions: { operationId } });
}
