import { encodeAbiParameters, keccak256, stringToHex, type Address } from "viem";

/**
 * The first word of every dev proof (DevVerifier.DEV_PROOF_TAG): keccak256("queue-devstack.dev-proof.v1")
 * with its top bit set, so above the BN254 base field modulus: never a curve coordinate, and a Groth16
 * verifier's pairing refuses it.
 */
export const DEV_PROOF_TAG = BigInt(keccak256(stringToHex("queue-devstack.dev-proof.v1"))) | (1n << 255n);

/** A proof in the Solidity verifiers' layout. */
export interface VerifierProof {
  a: [bigint, bigint];
  b: [[bigint, bigint], [bigint, bigint]];
  c: [bigint, bigint];
}

/**
 * The dev proof of these public signals for one DevVerifier on one chain: `a = [tag, h]`, `b` and `c`
 * zero, `h = keccak256(abi.encode(verifier, chainId, publicSignals))`. It proves nothing: a stack with
 * dev proofs checks only that the client meant these public inputs for this verifier.
 */
export function devProof(args: { verifier: Address; chainId: number; publicSignals: readonly bigint[] }): VerifierProof {
  const binding = keccak256(
    encodeAbiParameters([{ type: "address" }, { type: "uint256" }, { type: "uint256[9]" }], [args.verifier, BigInt(args.chainId), args.publicSignals as never]),
  );
  return { a: [DEV_PROOF_TAG, BigInt(binding)], b: [[0n, 0n], [0n, 0n]], c: [0n, 0n] };
}

/** What a Pool's verifier expects: real Groth16 proofs, or dev proofs (DevVerifier). */
export type ProofSystemName = "groth16" | "dev";

/** How a proof system is named to people: "dev proofs" always in those words. */
export function describeProofSystem(system: ProofSystemName): string {
  return system === "dev" ? "dev proofs" : "real Groth16 proofs";
}
