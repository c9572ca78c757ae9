import { BaseError, ContractFunctionRevertedError, decodeFunctionResult, getContractError, type Address, type PublicClient } from "viem";
import { currentFees, type Fees } from "../chain/fees.ts";
import { poolAbi } from "../chain/pool-abi.ts";
import { poolCall, transactCalldata } from "../chain/pool-call.ts";
import { revertReason } from "../chain/revert.ts";
import { ProblemError } from "../problem.ts";
import type { FinalizeRequest, RelayRequest } from "../schemas/request.ts";
import type { CheckContext } from "./check-context.ts";
import { chainUnavailable, nullifierSpent, unknownRoot } from "./refusals.ts";

/** The relayer can pay for a transaction at a fee under its cap; returns the fees it would offer. */
export async function checkRelayerReady({ chain, relayer, settings }: CheckContext): Promise<Fees> {
  const [fees, balance] = await relayerReads(chain, relayer);
  if (fees.maxFeePerGas > settings.maxFeePerGasCap) {
    throw new ProblemError("gas_price_too_high", `the relayer would offer ${fees.maxFeePerGas} wei/gas, above its cap ${settings.maxFeePerGasCap}`, {
      headers: { "retry-after": "15" },
    });
  }
  const cost = fees.maxFeePerGas * settings.gasLimit;
  if (balance < cost) {
    throw new ProblemError("relayer_unfunded", `the relayer holds ${balance} wei, a relay may cost ${cost}`, { headers: { "retry-after": "30" } });
  }
  return fees;
}

/** Reads of the relayer's fees and balance in flight, by chain client and relayer. */
const inFlight = new WeakMap<PublicClient, Map<Address, Promise<[Fees, bigint]>>>();

/**
 * The relayer's fees and balance. Callers at the same moment share one read (a burst of admissions
 * reads them once, not once each): a caller gets a read that started no earlier than its own call's
 * round trip ago.
 */
function relayerReads(chain: PublicClient, relayer: Address): Promise<[Fees, bigint]> {
  let reads = inFlight.get(chain);
  if (!reads) inFlight.set(chain, (reads = new Map()));
  const shared = reads.get(relayer);
  if (shared) return shared;
  const read = Promise.all([currentFees(chain), chain.getBalance({ address: relayer })]).finally(() => reads.delete(relayer));
  reads.set(relayer, read);
  return read;
}

export async function checkRootAndNullifiers({ chain, config, spender }: CheckContext, request: RelayRequest): Promise<void> {
  const pool = config.poolAddress as Address;
  const root = BigInt(request.publicInputs.root);
  const nullifiers = request.publicInputs.inputNullifiers.map(BigInt);
  const [known, ...spent] = await Promise.all([
    chain.readContract({ address: pool, abi: poolAbi, functionName: "isKnownRoot", args: [root] }),
    ...nullifiers.map((n) => chain.readContract({ address: pool, abi: poolAbi, functionName: "nullifierSpent", args: [n] })),
  ]);
  if (!known) throw unknownRoot(String(root));
  const index = spent.findIndex(Boolean);
  if (index >= 0) {
    const nullifier = String(nullifiers[index]);
    throw nullifierSpent(nullifier, spender(nullifier));
  }
}

/** The transaction, simulated from the relayer against the latest state. */
export async function simulate(context: CheckContext, request: RelayRequest | FinalizeRequest): Promise<void> {
  await simulateResult(context, request);
}

/**
 * simulate(), returning what the call returns (an action's reservation state). viem's simulateContract,
 * made of its parts (eth_call, the result decoded, an error made a contract error), with the calldata the
 * writer signs: encoded once (transactCalldata), not again by name.
 */
export async function simulateResult({ chain, config, relayer, settings }: CheckContext, request: RelayRequest | FinalizeRequest): Promise<unknown> {
  const address = config.poolAddress as Address;
  const { functionName, args } = poolCall(request);
  try {
    const { data } = await chain.call({ account: relayer, to: address, data: transactCalldata(request), gas: settings.gasLimit, batch: false });
    return decodeFunctionResult({ abi: poolAbi, functionName, args, data: data ?? "0x" } as never);
  } catch (caught) {
    const error = getContractError(caught as BaseError, { abi: poolAbi, address, args, functionName, sender: relayer, docsPath: "/docs/contract/simulateContract" });
    // Only a revert means "would revert"; a timeout or a dead RPC says nothing about the transaction.
    const reverted = error instanceof BaseError && error.walk((e) => e instanceof ContractFunctionRevertedError);
    if (!reverted) throw chainUnavailable(error);
    const reason = revertReason("simulation_failed", error);
    throw new ProblemError("simulation_failed", reason.detail, { extensions: reason.revert ? { revert: reason.revert } : {} });
  }
}

