import {
  BaseError,
  ContractFunctionRevertedError,
  ExecutionRevertedError,
  concatHex,
  decodeFunctionResult,
  encodeAbiParameters,
  getAbiItem,
  getContractError,
  HttpRequestError,
  RawContractError,
  ResponseBodyTooLargeError,
  RpcRequestError,
  SocketClosedError,
  TimeoutError,
  WebSocketRequestError,
  toFunctionSelector,
  type AbiFunction,
  type AbiParameter,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import type { DeploymentConfig } from "../config/deployment-config.ts";
import { hashActionExtData, hashExtData, publicAmountOf } from "../chain/ext-data.ts";
import { poolAbi } from "../chain/pool-abi.ts";
import { ProblemError } from "../problem.ts";
import { currentFees, type Fees } from "./fees.ts";
import type { OperationKind } from "./operation.ts";
import { toActionArg, toPoolArgs, type RelayRequest } from "./request.ts";
import { revertReason } from "./revert.ts";
import type { RelaySettings } from "./settings.ts";
import type { OperationStore } from "./store.ts";
import type { FinalizeRequest } from "./request.ts";

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Everything the checks read. */
export interface CheckContext {
  config: DeploymentConfig;
  chain: PublicClient;
  relayer: Address;
  settings: RelaySettings;
  /** Our own mined operation that spent a nullifier, if any: a nullifier_spent answer names it. */
  spender: (nullifier: string) => string | undefined;
}

/** A request's deployment reference must be this runtime's (spec rules 6 to 8): else 422 deployment_mismatch. */
export function checkDeploymentRef(config: DeploymentConfig, ref: { chainId: number; poolAddress: string; domain: string }): void {
  if (ref.chainId !== config.chainId || !same(ref.poolAddress, config.poolAddress) || ref.domain !== config.domain) {
    throw new ProblemError(
      "deployment_mismatch",
      `made for chain ${ref.chainId}, Pool ${ref.poolAddress}, domain ${ref.domain}; this runtime serves chain ${config.chainId}, Pool ${config.poolAddress}, domain ${config.domain}`,
      { extensions: { expected: { chainId: config.chainId, poolAddress: config.poolAddress, domain: config.domain } } },
    );
  }
}

/** Checks that need no chain: route, deployment, asset, binding of the public fields, fee, duplicates. */
export function checkRequest(kind: Exclude<OperationKind, "finalize">, request: RelayRequest, { config, relayer }: CheckContext): void {
  const { deployment, publicInputs, extData } = request;
  const extAmount = BigInt(extData.extAmount);
  if (kind === "send" && extAmount !== 0n) {
    throw new ProblemError("wrong_route", `a private send moves nothing out of the Pool (extAmount 0), this one has extAmount ${extAmount}: use withdraw-relay`);
  }
  if (kind === "withdraw" && extAmount >= 0n) {
    throw new ProblemError("wrong_route", `a withdrawal has a negative extAmount, this one has ${extAmount}: use send-relay`);
  }
  if (kind === "send" && request.action) {
    throw new ProblemError("wrong_route", "an external action is a withdrawal to the route's adapter: use withdraw-relay");
  }
  checkDeploymentRef(config, deployment);
  if (BigInt(publicInputs.domain) !== BigInt(config.domain)) {
    throw new ProblemError("deployment_mismatch", `publicInputs.domain is not this Pool's domain ${config.domain}`, {
      extensions: { expected: { chainId: config.chainId, poolAddress: config.poolAddress, domain: config.domain } },
    });
  }
  const asset = config.assets.find((a) => same(a.address, publicInputs.asset));
  if (!asset) throw new ProblemError("unsupported_asset", `asset ${publicInputs.asset} is not one of this Pool's funding assets`);

  const ext = { ...extData, extAmount, fee: BigInt(extData.fee) } as Parameters<typeof hashExtData>[2];
  const deploymentFields = { chainId: config.chainId, poolAddress: config.poolAddress, domain: BigInt(config.domain) };
  const expectedHash = request.action
    ? hashActionExtData(deploymentFields, asset.address, ext, toActionArg(request.action))
    : hashExtData(deploymentFields, asset.address, ext);
  if (BigInt(publicInputs.extDataHash) !== expectedHash) {
    throw new ProblemError("binding_mismatch", "publicInputs.extDataHash is not the hash of extData for this deployment: the execution fields are not the ones the proof was made for");
  }
  if (BigInt(publicInputs.publicAmount) !== publicAmountOf(extAmount, ext.fee)) {
    throw new ProblemError("binding_mismatch", "publicInputs.publicAmount is not extAmount - fee");
  }

  if (!same(extData.relayer, relayer)) {
    throw new ProblemError("relayer_mismatch", `the fee is paid to ${extData.relayer}; this runtime relays as ${relayer} (config relayFees.relayer)`);
  }
  // No fee entry is no relay, not a minimum of 0: a proof of nothing (dummy inputs, no outputs, no fee)
  // would otherwise make the relayer pay a transaction's gas for free.
  const schedule = config.relayFees.fees.find((f) => same(f.asset, asset.address));
  if (!schedule) throw new ProblemError("unsupported_asset", `this runtime relays nothing in ${asset.symbol} (${asset.address}): it has no relay fee for it`);
  // An action's fee is its quote's (checked with the quote); the schedule's is the floor of the others.
  const minimum = request.action ? 0n : BigInt(schedule[kind]);
  if (ext.fee < minimum) {
    throw new ProblemError("fee_too_low", `fee ${ext.fee} is below the relay fee ${minimum} for a ${kind} in ${asset.symbol}`, {
      extensions: { minimumFee: minimum.toString() },
    });
  }
  const [n0, n1] = publicInputs.inputNullifiers;
  if (n0 === n1) throw new ProblemError("duplicate_nullifier", `the request spends nullifier ${n0} twice`, { extensions: { nullifier: n0 } });
}

/** Room in the in-flight limit: in all (503 queue_full), and in the client's share of it, if known (429 too_many_in_flight). */
export function checkCapacity(store: OperationStore, settings: RelaySettings, client?: string): void {
  const live = store.countLive();
  if (live >= settings.maxLiveOperations) {
    throw new ProblemError("queue_full", `${live} operations are in flight, the limit is ${settings.maxLiveOperations}`, { headers: { "retry-after": "5" } });
  }
  if (client === undefined) return;
  const mine = store.countLive(client);
  if (mine >= settings.maxLivePerClient) {
    throw new ProblemError("too_many_in_flight", `this client has ${mine} operations in flight, its share of the queue is ${settings.maxLivePerClient}: wait for one to end`, {
      extensions: { limit: settings.maxLivePerClient },
      headers: { "retry-after": "5" },
    });
  }
}

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

/**
 * The Pool's simulation runs its verifier: its InvalidProof() revert is the proof's verdict (one pairing
 * per admission, not two).
 */
export function provenOrSimulationError(error: unknown): unknown {
  const revert = error instanceof ProblemError && error.code === "simulation_failed" ? (error.extensions.revert as { name?: string } | undefined) : undefined;
  return revert?.name === "InvalidProof" ? new ProblemError("invalid_proof", "the proof does not verify for these public inputs") : error;
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

export function unknownRoot(root: string): ProblemError {
  return new ProblemError("unknown_root", `root ${root} is not among the Pool's recent roots: sync the tree and prove again`);
}

/** A nullifier spent on chain; by one of our own operations, when we know which. */
export function nullifierSpent(nullifier: string, operationId: string | undefined): ProblemError {
  return new ProblemError("nullifier_spent", `nullifier ${nullifier} is already spent on chain${operationId ? ` by operation ${operationId}` : ""}`, {
    extensions: operationId ? { nullifier, operationId } : { nullifier },
  });
}

export function checkInFlight(store: { liveHolder(nullifier: string): string | undefined }, claims: readonly string[]): void {
  for (const nullifier of claims) {
    const holder = store.liveHolder(nullifier);
    if (holder) throw nullifierInFlight(nullifier, holder);
  }
}

export function nullifierInFlight(nullifier: string, operationId: string): ProblemError {
  return new ProblemError("nullifier_in_flight", `nullifier ${nullifier} is held by live operation ${operationId}`, { extensions: { nullifier, operationId } });
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

/** viem's errors of the way to the node (no answer, a cut connection, the node's own failure), not of what was asked. */
const TRANSPORT_ERRORS = [HttpRequestError, TimeoutError, WebSocketRequestError, SocketClosedError, ResponseBodyTooLargeError, RpcRequestError];

/** The node's answer "it reverts" (EIP-1474 code 3, or viem's decoded revert): the question's fault, never an outage. */
const isRevert = (e: unknown) => e instanceof ContractFunctionRevertedError || e instanceof ExecutionRevertedError || e instanceof RawContractError || (e instanceof RpcRequestError && e.code === 3);

/**
 * JSON-RPC codes by which a node refuses the question itself (EIP-1474: malformed, unknown or unsupported
 * method, invalid params): asked again, it is refused again, so it is no outage to retry. -32005 (limit
 * exceeded) is not among them: providers also answer it to a rate limit, which passes.
 */
const REFUSED_QUESTION = new Set([-32700, -32600, -32601, -32602, -32004]);
const isRefusedQuestion = (e: unknown) => e instanceof RpcRequestError && REFUSED_QUESTION.has(e.code);

export function isTransportError(error: unknown): boolean {
  if (!(error instanceof BaseError) || error.walk(isRevert) !== null || error.walk(isRefusedQuestion) !== null) return false;
  return error.walk((e) => TRANSPORT_ERRORS.some((type) => e instanceof type)) !== null;
}

/**
 * A chain call that failed on the way to the node: 503, try again. Any other error is returned as it
 * is: a bug or a value viem cannot encode is no outage, and must not tell the client to retry (a 500).
 */
export function chainUnavailable(error: unknown): unknown {
  if (error instanceof ProblemError || !isTransportError(error)) return error;
  return new ProblemError("chain_unavailable", "the chain did not answer; try again", { headers: { "retry-after": "2" } });
}

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
