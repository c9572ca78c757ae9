import { createRequire } from "node:module";
import { isMainThread } from "node:worker_threads";
import { ArtifactIntegrityError, checkProofFiles, type ProofFilePins, type ProofFiles } from "./proof-files.ts";

/** The part of snarkjs the prover uses (snarkjs ships no types). */
interface Groth16 {
  fullProve(input: Record<string, unknown>, wasm: { type: "mem"; data: Uint8Array }, zkey: { type: "mem"; data: Uint8Array }): Promise<{ proof: SnarkProof; publicSignals: string[] }>;
  verify(verificationKey: unknown, publicSignals: string[], proof: SnarkProof): Promise<boolean>;
}

let loading: Promise<Groth16> | undefined;

/**
 * snarkjs, loaded on the first proof and kept, so that importing the client loads none of it (nor
 * its worker threads).
 */
function groth16(): Promise<Groth16> {
  loading ??= loadSnarkjs().then(
    (snarkjs) => snarkjs.groth16,
    (error: unknown) => {
      loading = undefined; // not kept: the next proof tries again
      throw error;
    },
  );
  return loading;
}

/**
 * ffjavascript's web-worker decides when it is loaded which side of a Worker it is on: loaded off the
 * main thread (in vitest's threads pool, or any worker_threads Worker), it takes itself for a worker it
 * started and throws (no workerData). So off the main thread snarkjs's CommonJS build is required, in
 * one synchronous step, with worker_threads saying "main thread" for that step alone: web-worker then
 * exports its Worker class as on the main thread, and the workers it starts see the truth.
 */
async function loadSnarkjs(): Promise<{ groth16: Groth16 }> {
  if (isMainThread) return (await import("snarkjs")) as { groth16: Groth16 };
  const require = createRequire(import.meta.url);
  const threads = require("node:worker_threads") as { isMainThread: boolean };
  threads.isMainThread = true;
  try {
    return require("snarkjs") as { groth16: Groth16 };
  } finally {
    threads.isMainThread = false;
  }
}

/** A proof the pinned verification key does not accept: it is never returned, so it never leaves the client. */
export class ProofVerificationError extends Error {
  override name = "ProofVerificationError";
}

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
  /** Proves, then verifies the proof with the pinned verification key; throws ProofVerificationError if it fails. */
  prove(input: Record<string, unknown>): Promise<{ proof: SolidityProof; publicSignals: bigint[] }>;
  /** Stops snarkjs's worker threads, which otherwise keep the process alive. */
  close(): Promise<void>;
}

/**
 * A prover over the reviewed proof files: their sha256 must be the pins (a prover cannot be made from
 * any other files), and every proof is verified with the pinned verification key before it is
 * returned. Proving keys or witness generators from a hostile queue could otherwise hide secrets in
 * proofs that it then refuses.
 */
export function createProver(files: ProofFiles, pins: ProofFilePins): Prover {
  checkProofFiles(files, pins);
  let verificationKey: unknown;
  try {
    verificationKey = JSON.parse(Buffer.from(files.verificationKey).toString("utf8"));
  } catch (error) {
    throw new ArtifactIntegrityError(`the pinned verification key is not JSON: ${(error as Error).message}`);
  }
  return {
    async prove(input) {
      const { proof, publicSignals } = await (await groth16()).fullProve(input, { type: "mem", data: files.wasm }, { type: "mem", data: files.zkey });
      await verifyOrThrow(verificationKey, publicSignals, proof);
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

async function verifyOrThrow(verificationKey: unknown, publicSignals: string[], proof: SnarkProof): Promise<void> {
  let valid: boolean;
  try {
    valid = await (await groth16()).verify(verificationKey, publicSignals, proof);
  } catch (error) {
    // A key snarkjs cannot even use (wrong shape, wrong number of inputs) fails like a wrong proof.
    throw new ProofVerificationError(`the proof could not be verified with the pinned verification key: ${(error as Error).message}`, { cause: error });
  }
  if (valid !== true) throw new ProofVerificationError("the proof does not verify with the pinned verification key; it was not returned");
}

/** snarkjs caches one bn128 curve (with its worker threads) per process; terminating it lets the process exit. */
export async function closeProvers(): Promise<void> {
  const curve = (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128;
  if (curve) {
    delete (globalThis as { curve_bn128?: unknown }).curve_bn128;
    await curve.terminate();
  }
}
