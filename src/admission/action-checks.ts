import type { DeploymentConfig } from "../config/deployment-config.ts";
import { ProblemError } from "../problem.ts";
import type { Address } from "viem";
import { adapterAbi } from "../chain/abi.ts";
import { chainUnavailable, nullifierSpent, unknownRoot } from "./refusals.ts";
import { checkRootAndNullifiers, simulateResult } from "./chain-checks.ts";
import { isTransportError } from "../chain/transport-error.ts";
import type { CheckContext } from "./check-context.ts";
import type { FinalizeRequest, RelayRequest } from "../schemas/request.ts";
import { Quote } from "../schemas/quote.ts";
import { externalRoute } from "./action-routes.ts";

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * An external action must cite, by its exact id, an unexpired quote this relayer signed, and carry
 * exactly its terms: the route's adapter as recipient, the quoted input, asset, output asset, least
 * output, deadline, finalize fee and finalizer (the relayer), and at least the quoted relay fee.
 */
export function checkActionQuote(request: RelayRequest, config: DeploymentConfig, stored: unknown, nowSeconds: number): void {
  const action = request.action;
  if (!action) return;
  const parsed = Quote.safeParse(stored);
  if (!parsed.success) throw new ProblemError("quote_mismatch", `no quote ${action.quoteId} from this relayer: ask POST quote for one`);
  const quote = parsed.data;
  if (nowSeconds > Number(quote.typedData.message.expiry)) {
    throw new ProblemError("quote_expired", `quote ${quote.quoteId} expired at ${quote.expiresAt}: ask for a new quote and prove again`, { extensions: { expiresAt: quote.expiresAt } });
  }
  const route = externalRoute(config, action.routeId);
  const terms: Array<[string, string, string]> = [
    ["action.routeId", action.routeId, quote.route],
    ["action.outputAsset", action.outputAsset, quote.assetOut],
    ["action.minOutput", action.minOutput, quote.minOutput],
    ["action.deadline", action.deadline, quote.deadline],
    ["action.finalizeFee", action.finalizeFee, quote.fees.finalize],
    // The quote's fee is paid for finalizing: only to the relayer that quoted it.
    ["action.finalizer", action.finalizer, quote.relayer],
    ["publicInputs.asset", request.publicInputs.asset, quote.assetIn],
    ["-extData.extAmount", (-BigInt(request.extData.extAmount)).toString(), quote.amountIn],
    ["extData.recipient", request.extData.recipient, route.adapter.address],
  ];
  for (const [field, got, quoted] of terms) {
    if (!same(got, quoted)) {
      throw new ProblemError("quote_mismatch", `${field} is ${got}, quote ${quote.quoteId} says ${quoted}`, { extensions: { field, quoted } });
    }
  }
  if (BigInt(request.extData.fee) < BigInt(quote.fees.action)) {
    throw new ProblemError("fee_too_low", `fee ${request.extData.fee} is below the quoted action fee ${quote.fees.action}`, { extensions: { minimumFee: quote.fees.action } });
  }
}

/** Pool.ReservationState's values, as Pool.transactAction returns its reservation's state. */
const RESERVATION_STATES = ["none", "pending", "settled", "failed", "finalized"] as const;

/**
 * What the action's simulation left its reservation in (Pool.transactAction's second return). Failed
 * (a synchronous output below the minimum, an adapter that reverts): the fee would buy only a refund,
 * and the relayer would pay the action's gas and the refund's, so it is not relayed; `expectedOutput`,
 * when known, is what the route's adapter quotes for the input now. A synchronous route settles or
 * fails in the action's own transaction: left Pending, only its adapter's cancel could refund it after
 * the deadline, and a synchronous adapter may have none (the input would be stuck). The Pool refuses
 * that itself; this runtime does not rely on it.
 */
export function checkSimulatedAction(request: RelayRequest, config: DeploymentConfig, simulatedState: number, expectedOutput?: bigint): void {
  if (!request.action) return;
  const route = externalRoute(config, request.action.routeId);
  const state = RESERVATION_STATES[simulatedState] ?? `state ${simulatedState}`;
  if (state === "failed") {
    const output = expectedOutput === undefined ? "its adapter reverts" : `its adapter now pays ${expectedOutput}, the least it takes is ${request.action.minOutput}`;
    throw new ProblemError("simulation_failed", `the action on route ${route.name} would fail in its own transaction (${output}): its fee would buy only a refund, so it is not relayed; ask for a new quote`, {
      extensions: { reservationState: state, minOutput: request.action.minOutput, ...(expectedOutput === undefined ? {} : { expectedOutput: expectedOutput.toString() }) },
    });
  }
  if (route.kind === "sync" && state !== "settled") {
    throw new ProblemError("simulation_failed", `the action on synchronous route ${route.name} would leave its reservation ${state}: a synchronous route settles or fails at once, so it is not relayed`, {
      extensions: { reservationState: state },
    });
  }
}

/**
 * The transaction simulated from the relayer (simulateResult), and an action's outcome checked
 * (checkSimulatedAction): the admission and the engine's re-check before signing both run this, so a
 * route re-approved with another kind, or a price that moved, while an action waits is caught before
 * anything is sent.
 */
export async function simulateChecked(context: CheckContext, request: RelayRequest | FinalizeRequest): Promise<void> {
  const result = await simulateResult(context, request);
  if ("reservationId" in request || !request.action) return;
  const state = Number((result as readonly [unknown, number])[1]);
  const failed = RESERVATION_STATES[state] === "failed";
  checkSimulatedAction(request, context.config, state, failed ? await adapterQuote(context, request) : undefined);
}

/**
 * A relay's checks of the chain's state. The simulation (simulateChecked) decides the root and the
 * nullifiers too: the Pool's spend reverts UnknownRoot(root) or NullifierSpent(nullifier) before it
 * verifies the proof. Those reverts are answered as the reads' refusals would be (naming our operation
 * that spent the nullifier); after any other revert (one before the Pool read them) they are read on
 * their own, and their refusal comes first, as if they had been read before the simulation.
 */
export async function simulateRelay(context: CheckContext, request: RelayRequest): Promise<void> {
  try {
    await simulateChecked(context, request);
  } catch (error) {
    if (!(error instanceof ProblemError) || error.code !== "simulation_failed") throw error; // the chain did not answer
    const revert = error.extensions.revert as { name?: string; args?: string[] } | undefined;
    const [arg] = revert?.args ?? [];
    if (revert?.name === "UnknownRoot" && arg !== undefined) throw unknownRoot(arg);
    if (revert?.name === "NullifierSpent" && arg !== undefined) throw nullifierSpent(arg, context.spender(arg));
    await checkRootAndNullifiers(context, request);
    throw error;
  }
}

/** What the action's route's adapter quotes for its input now (undefined when it reverts or is not asked). */
async function adapterQuote({ chain, config }: CheckContext, request: RelayRequest): Promise<bigint | undefined> {
  const action = request.action;
  if (!action) return undefined;
  const route = externalRoute(config, action.routeId);
  const args = [request.publicInputs.asset as Address, action.outputAsset as Address, -BigInt(request.extData.extAmount)] as const;
  return chain.readContract({ address: route.adapter.address as Address, abi: adapterAbi, functionName: "quote", args }).catch((error: unknown) => {
    if (isTransportError(error)) throw chainUnavailable(error);
    return undefined;
  });
}
