import type { Address } from "viem";

/**
 * The precompiles of the chain's fork (Prague, anvil's default): 0x01–0x0a, then EIP-2537's BLS12-381
 * ones (0x0b–0x11), named as their EIPs name them. A call to one carries no ABI selector: unnamed, a
 * verifier's trace read `0x…07.0x0b158420()` once for each ecMul.
 */
const PRECOMPILES = [
  "ecRecover",
  "sha256",
  "ripemd160",
  "identity",
  "modexp",
  "ecAdd",
  "ecMul",
  "ecPairing",
  "blake2f",
  "pointEvaluation",
  "bls12G1Add",
  "bls12G1MSM",
  "bls12G2Add",
  "bls12G2MSM",
  "bls12PairingCheck",
  "bls12MapFpToG1",
  "bls12MapFp2ToG2",
] as const;

/** A precompile's address as a trace names it ("precompile 0x07") and its name ("ecMul"), or null for any other address. */
export function precompileAt(address: Address | undefined): { contract: string; name: string } | null {
  if (!address || !/^0x0{38}[0-9a-f]{2}$/i.test(address)) return null;
  const index = Number.parseInt(address.slice(-2), 16);
  const name = PRECOMPILES[index - 1];
  return name ? { contract: `precompile 0x${address.slice(-2).toLowerCase()}`, name } : null;
}
