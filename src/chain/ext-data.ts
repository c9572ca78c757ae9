import { encodeAbiParameters, keccak256, type Address, type Hex } from "viem";

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
