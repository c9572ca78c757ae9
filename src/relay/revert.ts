import { BaseError, ContractFunctionRevertedError } from "viem";
import type { FailureReason } from "./operation.ts";

/**
 * What a revert means when it ends a race someone else won: said in the reason, so a client (or the
 * dashboard) reads a lost race as one rather than as a fault of its own request.
 */
const LOST_RACES: Record<string, string> = {
  AlreadyFinalized: "another finalize of this reservation was mined first (a lost race: the reservation is finalized)",
  FinalizerOnly: "only the action's named finalizer may finalize it until its deadline plus the grace period",
  NullifierSpent: "a note it spends was spent by another transaction mined first",
};

/** A failure reason from a viem call error, with the Pool's custom error decoded by name when there is one. */
export function revertReason(code: string, error: unknown): FailureReason {
  if (error instanceof BaseError) {
    const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
    if (reverted instanceof ContractFunctionRevertedError && reverted.data?.errorName) {
      const args = (reverted.data.args ?? []).map((a) => String(a));
      return {
        code,
        detail: `the Pool reverted with ${reverted.data.errorName}(${args.join(", ")})${LOST_RACES[reverted.data.errorName] ? `: ${LOST_RACES[reverted.data.errorName]}` : ""}`,
        revert: { name: reverted.data.errorName, args },
      };
    }
    return { code, detail: error.shortMessage };
  }
  return { code, detail: String(error) };
}
