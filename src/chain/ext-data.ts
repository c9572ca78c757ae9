import { encodeAbiParameters, keccak256, type Address, type Hex } from "viem";
import type { RelayRequest } from "../schemas/request.ts";

/** The BN254 scalar field. */
export const FIELD_SIZE = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

export interface ExtDataFields {
  recipient: Address;
  extAmount: bigint;
  relayer: Address;
  fee: bigint;
  encryptedOutput1: Hex;
  encryptedOutput2: Hex;
}

/** extDataHash exactly as Pool.hashExtData computes it: binds chain, Pool, domain and every execution field. */
export function hashExtData(deployment: { chainId: number; poolAddress: Address; domain: bigint }, asset: Address, ext: ExtDataFields): bigint {
  const encoded = encodeAbiParameters(
    [
      { type: "uint256" },
      { type: "address" },
      { type: "uint256" },
      { type: "address" },
      { type: "address" },
      { type: "int256" },
      { type: "address" },
      { type: "uint256" },
      { type: "bytes32" },
      { type: "bytes32" },
    ],
    [
      BigInt(deployment.chainId),
      deployment.poolAddress,
      deployment.domain,
      asset,
      ext.recipient,
      ext.extAmount,
      ext.relayer,
      ext.fee,
      keccak256(ext.encryptedOutput1),
      keccak256(ext.encryptedOutput2),
    ],
  );
  return BigInt(keccak256(encoded)) % FIELD_SIZE;
}

/** publicAmount = extAmount - fee in the field, as Pool.publicAmountOf. */
export function publicAmountOf(extAmount: bigint, fee: bigint): bigint {
  const value = (extAmount - fee) % FIELD_SIZE;
  return value < 0n ? value + FIELD_SIZE : value;
}

/** An approved external action's terms (Pool.Action), bound to the proof through extDataHash. */
export interface ActionTerms {
  routeId: Hex;
  outputAsset: Address;
  minOutput: bigint;
  outputPrecommitment: bigint;
  deadline: bigint;
  finalizeFee: bigint;
  quoteId: Hex;
  /** Who alone may finalize it for its fee until deadline + the Pool's FINALIZE_GRACE: the quoting relayer. */
  finalizer: Address;
}

const ACTION_TUPLE = {
  type: "tuple",
  components: [
    { name: "routeId", type: "bytes32" },
    { name: "outputAsset", type: "address" },
    { name: "minOutput", type: "uint256" },
    { name: "outputPrecommitment", type: "uint256" },
    { name: "deadline", type: "uint64" },
    { name: "finalizeFee", type: "uint256" },
    { name: "quoteId", type: "bytes32" },
    { name: "finalizer", type: "address" },
  ],
} as const;

/** An action's extDataHash, as Pool.hashActionExtData: the execution fields' hash and the action's terms. */
export function hashActionExtData(deployment: { chainId: number; poolAddress: Address; domain: bigint }, asset: Address, ext: ExtDataFields, action: ActionTerms): bigint {
  const terms = keccak256(encodeAbiParameters([ACTION_TUPLE], [action]));
  const encoded = encodeAbiParameters([{ type: "uint256" }, { type: "bytes32" }], [hashExtData(deployment, asset, ext), terms]);
  return BigInt(keccak256(encoded)) % FIELD_SIZE;
}

/** The Pool's reservation id of an action: keccak256(abi.encode(domain, nullifier0, nullifier1)) (unique: nullifiers are spent once). */
export function actionReservationId(domain: bigint, nullifier0: bigint, nullifier1: bigint): Hex {
  return keccak256(encodeAbiParameters([{ type: "uint256" }, { type: "uint256" }, { type: "uint256" }], [domain, nullifier0, nullifier1]));
}

/** The Pool's reservation id of an action (actionReservationId of its domain and nullifiers). */
export function reservationIdOf(request: RelayRequest): `0x${string}` {
  const [n0, n1] = request.publicInputs.inputNullifiers;
  return actionReservationId(BigInt(request.publicInputs.domain), BigInt(n0), BigInt(n1));
}
