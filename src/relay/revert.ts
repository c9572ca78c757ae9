import { BaseError, ContractFunctionRevertedError } from "viem";
import type { FailureReason } from "./operation.ts";

/** A failure reason from a viem call error, with the Pool's custom error decoded by name when there is one. */
export function revertReason(code: string, error: unknown): FailureReason {
  if (error instanceof BaseError) {
    const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
    if (reverted instanceof ContractFunctionRevertedError && reverted.data?.errorName) {
      const args = (reverted.data.args ?? []).map((a) => String(a));
      return {
        code,
        detail: `the Pool reverted with ${reverted.data.errorName}(${args.join(", ")})`,
        revert: { name: reverted.data.errorName, args },
      };
    }
    return { code, detail: error.shortMessage };
  }
  return { code, detail: String(error) };
}
