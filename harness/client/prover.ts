import * as snarkjs from "snarkjs";

/** Groth16 proof as snarkjs returns it (decimal strings). */
export interface SnarkProof {
  pi_a: string[];
  pi_b: string[][];
  pi_c: string[];
}

/** The proof in the Solidity verifier's layout (note pi_b's swapped coordinates). */
export interface SolidityProof {
  a: [bigint, bigint];
  b: [[bigint, bigint], [bigint, bigint]];
  c: [bigint, bigint];
}

export interface Prover {
  prove(input: Record<string, unknown>): Promise<{ proof: SolidityProof; publicSignals: bigint[] }>;
  /** Stops snarkjs's worker threads, which otherwise keep the process alive. */
  close(): Promise<void>;
}

/** A prover over proof files already in memory (and already checked: see fetchProofArtifacts). */
export function createProver(files: { wasm: Uint8Array; zkey: Uint8Array }): Prover {
  return {
    async prove(input) {
      const { proof, publicSignals } = (await snarkjs.groth16.fullProve(input, { type: "mem", data: files.wasm }, { type: "mem", data: files.zkey })) as {
        proof: SnarkProof;
        publicSignals: string[];
      };
      const big = (x: string | undefined) => BigInt(x as string);
      const [a, b, c] = [proof.pi_a, proof.pi_b, proof.pi_c];
      return {
        proof: {
          a: [big(a[0]), big(a[1])],
          b: [
            [big(b[0]?.[1]), big(b[0]?.[0])],
            [big(b[1]?.[1]), big(b[1]?.[0])],
          ],
          c: [big(c[0]), big(c[1])],
        },
        publicSignals: publicSignals.map(big),
      };
    },
    close: closeProvers,
  };
}

/** snarkjs caches one bn128 curve (with its worker threads) per process; terminating it lets the process exit. */
export async function closeProvers(): Promise<void> {
  const curve = (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128;
  if (curve) {
    delete (globalThis as { curve_bn128?: unknown }).curve_bn128;
    await curve.terminate();
  }
}
