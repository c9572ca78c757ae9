import { withinDeadline } from "../chain/deadline.ts";
import type { OperationKind } from "../schemas/operation.ts";
import type { FinalizeRequest, RelayRequest } from "../schemas/request.ts";
import type { OperationStore } from "../store/types.ts";
import { checkActionQuote, simulateRelay } from "./action-checks.ts";
import { checkRelayerReady, simulate } from "./chain-checks.ts";
import type { CheckContext } from "./check-context.ts";
import { checkFinalizeFee, checkReservation, reservationClaim } from "./finalize-checks.ts";
import { byTheChain, provenOrSimulationError, quoteUsed } from "./refusals.ts";
import { checkCapacity, checkDeploymentRef, checkInFlight, checkRequest } from "./request-checks.ts";

/** What an admission reads besides the chain: the store, and how long the chain's checks may take as a whole. */
export interface Admission {
  store: OperationStore;
  chainTimeoutMs: number;
}

/** A relay's admission checks, in the order a client hears their refusals; `checks.chain` is the chain they read. */
export async function decideRelay({ store, chainTimeoutMs }: Admission, kind: Exclude<OperationKind, "finalize">, request: RelayRequest, checks: CheckContext, nowSeconds: number, client?: string): Promise<void> {
  checkRequest(kind, request, checks);
  checkActionQuote(request, checks.config, request.action ? store.getQuote(request.action.quoteId) : undefined, nowSeconds);
  // Before the chain is asked: while our operation holding a nullifier is live, the chain may already
  // say "spent" (mined, not yet seen by the engine); "in flight, poll this operation" is the answer.
  checkInFlight(store, request.publicInputs.inputNullifiers);
  // Before the chain is asked too; the insert decides (two actions citing one quote may both get here).
  const user = request.action ? store.quoteUser(request.action.quoteId) : undefined;
  if (user !== undefined) throw quoteUsed(request.action?.quoteId as string, user);
  checkCapacity(store, checks.settings, client);
  await byTheChain(withinDeadline(checkOnChain(checks, request), chainTimeoutMs));
}

/** A finalize's admission checks; `checks.chain` is the chain they read. */
export async function decideFinalize({ store, chainTimeoutMs }: Admission, request: FinalizeRequest, checks: CheckContext, client?: string): Promise<void> {
  const claims = [reservationClaim(request.reservationId)];
  checkDeploymentRef(checks.config, request.deployment);
  checkInFlight(store, claims);
  checkCapacity(store, checks.settings, client);
  await byTheChain(withinDeadline(
    (async () => {
      await checkRelayerReady(checks);
      const reservation = await checkReservation(checks, request);
      await checkFinalizeFee(checks, request, reservation, store);
      await simulate(checks, request);
    })(),
    chainTimeoutMs,
  ));
}

/**
 * The checks that read the chain, side by side. Reads only: past the deadline they run on, and nothing
 * comes of them. When several fail, the answer is the first in this order, as if they had run one
 * after the other: relayer, root and nullifiers (the simulation's own refusals), then the rest of
 * the simulation, whose InvalidProof() revert is an invalid proof.
 */
async function checkOnChain(checks: CheckContext, request: RelayRequest): Promise<void> {
  const results = await Promise.allSettled([checkRelayerReady(checks), simulateRelay(checks, request)]);
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw provenOrSimulationError(failed.reason);
}
