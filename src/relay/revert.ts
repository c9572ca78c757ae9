import { BaseError, ContractFunctionRevertedError, decodeErrorResult, type Hex } from "viem";
import { adapterErrorsAbi } from "../chain/abi.ts";
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

/** An error the Pool's ABI does not name: one of an adapter's, which the Pool passes on unchanged. */
function adapterError(raw: Hex | undefined): { errorName: string; args: readonly unknown[] } | undefined {
  if (raw === undefined || raw.length < 10) return undefined;
  try {
    const decoded = decodeErrorResult({ abi: adapterErrorsAbi, data: raw });
    return { errorName: decoded.errorName, args: decoded.args ?? [] };
  } catch {
    return undefined;
  }
}

/** A failure reason from a viem call error, with the Pool's (or its adapter's) custom error decoded by name when there is one. */
export function revertReason(code: string, error: unknown): FailureReason {
  if (error instanceof BaseError) {
    const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
    if (reverted instanceof ContractFunctionRevertedError) {
      const pools = reverted.data?.errorName ? { errorName: reverted.data.errorName, args: reverted.data.args ?? [] } : undefined;
      const decoded = pools ?? adapterError(reverted.raw);
      if (decoded) {
        const args = decoded.args.map((a) => String(a));
        const who = pools ? "the Pool" : "the route's adapter (through the Pool)";
        return {
          code,
          detail: `${who} reverted with ${decoded.errorName}(${args.join(", ")})${LOST_RACES[decoded.errorName] ? `: ${LOST_RACES[decoded.errorName]}` : ""}`,
          revert: { name: decoded.errorName, args },
        };
      }
    }
    return { code, detail: error.shortMessage };
  }
  return { code, detail: String(error) };
}
