import { concatHex, encodeAbiParameters, getAbiItem, toFunctionSelector, type AbiFunction, type AbiParameter, type Hex } from "viem";
import { toActionArg, toPoolArgs, type FinalizeRequest, type RelayRequest } from "../schemas/request.ts";
import { poolAbi } from "./pool-abi.ts";

/** Pool.transact, Pool.transactAction for an external action, or Pool.finalize. */
export function poolCall(request: RelayRequest | FinalizeRequest) {
  if ("reservationId" in request) return { functionName: "finalize", args: [request.reservationId as Hex] } as const;
  return request.action
    ? ({ functionName: "transactAction", args: [...toPoolArgs(request), toActionArg(request.action)] } as const)
    : ({ functionName: "transact", args: toPoolArgs(request) } as const);
}

/** Each Pool function's selector and parameters, resolved once: encodeFunctionData resolves and hashes the signature on every call (about three quarters of its time for a transact). */
const encoders = new Map<string, { selector: Hex; inputs: readonly AbiParameter[] }>();

export function transactCalldata(request: RelayRequest | FinalizeRequest): Hex {
  const { functionName, args } = poolCall(request);
  let encoder = encoders.get(functionName);
  if (!encoder) {
    const item = getAbiItem({ abi: poolAbi, name: functionName }) as AbiFunction;
    encoder = { selector: toFunctionSelector(item), inputs: item.inputs };
    encoders.set(functionName, encoder);
  }
  return concatHex([encoder.selector, encodeAbiParameters(encoder.inputs, args as never)]);
}
