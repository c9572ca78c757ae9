import { createRequire } from "node:module";
import { isMainThread } from "node:worker_threads";
import type { Address } from "viem";
import { describeProofSystem, devProof, type ProofSystemName } from "../../src/chain/dev-proof.ts";
import { FIELD_SIZE } from "./field.ts";
import { ArtifactIntegrityError, checkProofFiles, type ProofFilePins, type ProofFiles } from "./proof-files.ts";
import { QueueDevstackError } from "../../src/errors/index.ts";

type MemFile = { type: "mem"; data?: Uint8Array };

/** The part of snarkjs the prover uses (snarkjs ships no types). */
interface Snarkjs {
  groth16: {
    prove(zkey: MemFile, wtns: MemFile): Promise<{ proof: SnarkProof; publicSignals: string[] }>;
    verify(verificationKey: unknown, publicSignals: string[], proof: SnarkProof): Promise<boolean>;
  };
  /** circom_runtime's builder (snarkjs's own witness runtime): compiles and instantiates a circuit's wasm. */
  WitnessCalculatorBuilder(wasm: Uint8Array): Promise<{ calculateWTNSBin(input: Record<string, unknown>, sanityCheck: boolean): Promise<Uint8Array> }>;
}

let loading: Promise<Snarkjs> | undefined;

/**
 * snarkjs, loaded on the first proof and kept, so that importing the client loads none of it (nor
 * its worker threads).
 */
function snarkjs(): Promise<Snarkjs> {
  loading ??= loadSnarkjs().catch(
    (error: unknown) => {
      loading = undefined; // not kept: the next proof tries again
      throw error;
    },
  );
  return loading;
}

const groth16 = async () => (await snarkjs()).groth16;

/**
 * ffjavascript's web-worker decides when it is loaded which side of a Worker it is on: loaded off the
 * main thread (in vitest's threads pool, or any worker_threads Worker), it takes itself for a worker it
 * started and throws (no workerData). So off the main thread snarkjs's CommonJS build is required, in
 * one synchronous step, with worker_threads saying "main thread" for that step alone: web-worker then
 * exports its Worker class as on the main thread, and the workers it starts see the truth.
 */
async function loadSnarkjs(): Promise<Snarkjs> {
  if (isMainThread) {
    const [{ groth16 }, { WitnessCalculatorBuilder }] = await Promise.all([import("snarkjs"), import("circom_runtime")]);
    return { groth16, WitnessCalculatorBuilder } as unknown as Snarkjs;
  }
  const require = createRequire(import.meta.url);
  const threads = require("node:worker_threads") as { isMainThread: boolean };
  threads.isMainThread = true;
  try {
    return { groth16: require("snarkjs").groth16, WitnessCalculatorBuilder: require("circom_runtime").WitnessCalculatorBuilder } as Snarkjs;
  } finally {
    threads.isMainThread = false;
  }
}

/**
 * The circuit's witness calculator, compiled and instantiated once per prover and kept: snarkjs's
 * wtns.calculate compiles the 3 MB wasm and maps a new 2 GiB memory for every witness. One witness at
 * a time: the instance's memory holds one computation. Every `===` and assert is still checked.
 */
function witnessCalculator(wasm: Uint8Array): (input: Record<string, unknown>) => Promise<Uint8Array> {
  let calculator: ReturnType<Snarkjs["WitnessCalculatorBuilder"]> | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  return (input) => {
    const run = queue.then(async () => {
      calculator ??= snarkjs().then((s) => s.WitnessCalculatorBuilder(wasm));
      const built = await calculator.catch((error: unknown) => {
        calculator = undefined; // not kept: the next witness tries again
        throw error;
      });
      return built.calculateWTNSBin(input, false).catch((error: unknown) => {
        throw witnessError(error);
      });
    });
    queue = run.catch(() => undefined);
    return run;
  };
}

/** A proof the pinned verification key does not accept: it is never returned, so it never leaves the client. */
export class ProofVerificationError extends QueueDevstackError {
  override name = "ProofVerificationError";
  readonly code = "proof_not_verified";
}

/**
 * A witness the circuit refuses: one of its `===` constraints (or asserts) fails as the witness is
 * computed, in `template` at `line` of its circom source. Nothing is proved, in either proof system.
 */
export class WitnessConstraintError extends QueueDevstackError {
  override name = "WitnessConstraintError";
  readonly code = "witness_constraint_failed";
  readonly template: string;
  readonly line: number;
  constructor(template: string, line: number, options?: ErrorOptions) {
    super(`the witness breaks a constraint of the circuit: template ${template}, line ${line}; nothing was proved`, options);
    this.template = template;
    this.line = line;
  }
}

/** circom's witness calculator says "Assert Failed. Error in template JoinSplit_291 line: 72": that error, named. */
function witnessError(error: unknown): unknown {
  const found = /Assert Failed\.?\s*Error in template (\S+) line: (\d+)/.exec(String((error as Error)?.message ?? error));
  return found ? new WitnessConstraintError(found[1] as string, Number(found[2]), { cause: error }) : error;
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
  /** What its proofs are: real Groth16 proofs (also when absent), or dev proofs for one DevVerifier. */
  readonly proofSystem?: ProofSystemName;
  /**
   * Computes the full witness (a broken constraint throws WitnessConstraintError), proves, then checks
   * the proof (Groth16: with the pinned verification key); throws ProofVerificationError if it fails.
   */
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
export function createProver(files: ProofFiles, pins: ProverPins): Prover {
  checkProofFiles(files, pins);
  let verificationKey: { nPublic?: unknown };
  try {
    verificationKey = JSON.parse(Buffer.from(files.verificationKey).toString("utf8"));
  } catch (error) {
    throw new ArtifactIntegrityError(`the pinned verification key is not JSON: ${(error as Error).message}`);
  }
  const witness = witnessCalculator(files.wasm);
  if (pins.proofSystem === "dev") return devProver(pins, verificationKey, witness);
  return {
    proofSystem: "groth16",
    async prove(input) {
      const wtns = await witness(input);
      const { proof, publicSignals } = await (await groth16()).prove({ type: "mem", data: files.zkey }, { type: "mem", data: wtns });
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

/**
 * What a prover is made for: the pinned proof files, and the proof system the reviewed deployment's
 * verifier expects (ReviewedDeployment carries all of it). Dev proofs are bound to the verifier and chain.
 */
export type ProverPins = ProofFilePins & { proofSystem?: ProofSystemName; chainId?: number; verifier?: { address: string } };

/**
 * DEVELOPMENT ONLY: a prover for a stack with dev proofs. It computes the full witness with the pinned
 * wasm, so every constraint the witness code checks still holds or fails (WitnessConstraintError), then
 * makes the dev proof of its public signals for the pinned verifier and chain instead of a Groth16 one.
 */
function devProver(pins: ProverPins, verificationKey: { nPublic?: unknown }, witness: (input: Record<string, unknown>) => Promise<Uint8Array>): Prover {
  const { chainId, verifier } = pins;
  if (chainId === undefined || verifier === undefined) throw new ArtifactIntegrityError("dev proofs are bound to a verifier and a chain: the pins name no chainId or verifier");
  const nPublic = Number(verificationKey.nPublic);
  return {
    proofSystem: "dev",
    async prove(input) {
      // snarkjs's publicSignals: the witness's signals 1..nPublic (0 is the constant 1).
      const publicSignals = witnessValues(await witness(input), 1, nPublic);
      const proof = devProof({ verifier: verifier.address as Address, chainId, publicSignals });
      // The local check DevVerifier would make: one form, every signal in the field.
      if (publicSignals.length !== nPublic || publicSignals.some((x) => x >= FIELD_SIZE)) throw new ProofVerificationError("the dev proof's public signals are not field elements; it was not returned");
      return { proof, publicSignals };
    },
    close: closeProvers,
  };
}

/**
 * `count` values from index `first` of a .wtns file (iden3's binary format: "wtns", version, sections;
 * section 1 holds the field's byte size, section 2 the values, little-endian).
 */
function witnessValues(wtns: Uint8Array, first: number, count: number): bigint[] {
  const view = new DataView(wtns.buffer, wtns.byteOffset, wtns.byteLength);
  let n8 = 0;
  let offset = 12;
  const sections = view.getUint32(8, true);
  for (let i = 0; i < sections; i++) {
    const type = view.getUint32(offset, true);
    const size = Number(view.getBigUint64(offset + 4, true));
    const body = offset + 12;
    if (type === 1) n8 = view.getUint32(body, true);
    if (type === 2) {
      return Array.from({ length: count }, (_, k) => {
        const at = body + (first + k) * n8;
        let value = 0n;
        for (let b = n8 - 1; b >= 0; b--) value = (value << 8n) | BigInt(wtns[at + b] as number);
        return value;
      });
    }
    offset = body + size;
  }
  throw new ProofVerificationError("the witness file has no values section");
}

/** A client whose proofs the stack's verifier would refuse: set up for one proof system, the stack expects the other. Raised before anything is proved or sent. */
export class ProofSystemMismatchError extends QueueDevstackError {
  override name = "ProofSystemMismatchError";
  readonly code = "proof_system_mismatch";
  readonly client: ProofSystemName;
  readonly served: ProofSystemName;
  constructor(client: ProofSystemName, served: ProofSystemName, where: string) {
    const stack = served;
    super(`this client is set up for ${describeProofSystem(client)}, but ${where} expects ${describeProofSystem(stack)}: every proof would be refused. Set the client's proofSystem to "${stack}" (reviewed deployment data), or start the stack with ${stack === "dev" ? "real proofs" : "--proofs dev"}`);
    this.client = client;
    this.served = served;
  }
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
