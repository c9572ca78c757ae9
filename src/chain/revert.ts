import { BaseError, ContractFunctionRevertedError, decodeErrorResult, type Address, type Hex, type PublicClient, type TransactionReceipt } from "viem";
import { adapterErrorsAbi } from "./abi.ts";
import type { FailureReason } from "../schemas/operation.ts";
import type { FinalizeRequest, RelayRequest } from "../schemas/request.ts";
import { poolAbi } from "./pool-abi.ts";
import { poolCall } from "./pool-call.ts";

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

/**
 * Why a mined transaction reverted: the same call replayed on the state after its block (which holds
 * what an earlier transaction of that block changed, the usual cause), then on the state before it.
 */
export async function minedRevertReason(chain: PublicClient, call: { from: Address; pool: Address; gas: bigint }, request: RelayRequest | FinalizeRequest, receipt: TransactionReceipt): Promise<FailureReason> {
  for (const blockNumber of [receipt.blockNumber, receipt.blockNumber - 1n]) {
    try {
      await chain.simulateContract({
        account: call.from,
        address: call.pool,
        abi: poolAbi,
        ...poolCall(request),
        gas: call.gas,
        blockNumber,
      } as never);
    } catch (error) {
      return revertReason("reverted", error);
    }
  }
  return { code: "reverted", detail: `${receipt.transactionHash} was mined with status 0` };
}
