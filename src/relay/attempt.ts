import { keccak256, type Address, type LocalAccount } from "viem";
import type { Fees } from "../chain/fees.ts";
import { transactCalldata } from "../chain/pool-call.ts";
import type { FinalizeRequest, RelayRequest } from "../schemas/request.ts";
import type { StoredAttempt } from "../store/types.ts";
import type { CheckContext } from "../admission/check-context.ts";

/** A transaction of the request's Pool call, signed with the relayer key, as the store keeps it. */
export async function signAttempt({ account, checks, settings }: { account: LocalAccount; checks: CheckContext; settings: CheckContext["settings"] }, request: RelayRequest | FinalizeRequest, nonce: number, fees: Fees): Promise<StoredAttempt> {
  const raw = await account.signTransaction({
    type: "eip1559",
    chainId: checks.config.chainId,
    nonce,
    to: checks.config.poolAddress as Address,
    data: transactCalldata(request),
    value: 0n,
    gas: settings.gasLimit,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  });
  return {
    hash: keccak256(raw),
    nonce,
    raw,
    maxFeePerGas: fees.maxFeePerGas.toString(),
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
    createdAt: new Date().toISOString(),
  };
}
