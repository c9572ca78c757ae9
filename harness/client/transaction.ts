import { poseidon1 } from "poseidon-lite";
import { zeroAddress, type Address, type Hex } from "viem";
import { hashActionExtData, hashExtData, publicAmountOf, type ActionTerms, type ExtDataFields } from "../../src/chain/ext-data.ts";
import { randomFieldElement } from "./field.ts";
import type { AccountKeys, RecipientKeys } from "./keys.ts";
import type { MerkleTree } from "./merkle-tree.ts";
import { commitmentOf, encryptNote, nullifierOf, precommitmentOf, type Note } from "./note.ts";
import { ProofVerificationError, type SolidityProof, type Prover } from "./prover.ts";
import { QueueDevstackError } from "../../src/errors/index.ts";

/** The deployment a proof is made for (from the verified config). */
export interface Deployment {
  chainId: number;
  poolAddress: Address;
  domain: bigint;
}

export type ExtData = ExtDataFields;

export interface PublicInputs {
  root: bigint;
  publicAmount: bigint;
  extDataHash: bigint;
  asset: Address;
  domain: bigint;
  inputNullifiers: [bigint, bigint];
  outputCommitments: [bigint, bigint];
}

/** Everything a relayer (or the Pool) receives: the proof and public execution fields, nothing secret. */
export interface PreparedTransaction {
  proof: SolidityProof;
  publicInputs: PublicInputs;
  extData: ExtData;
}

/** The prepared transaction plus the new notes' openings, which stay with the sender. */
export interface PreparedWithNotes {
  transaction: PreparedTransaction;
  outputNotes: [Note, Note];
}

export { hashExtData, hashActionExtData, type ActionTerms };

export interface SpendInput {
  note: Note;
  leafIndex: number;
}

export interface OutputSpec {
  amount: bigint;
  to: RecipientKeys;
}

export class TransactionShapeError extends QueueDevstackError {
  override name = "TransactionShapeError";
  readonly code: string = "transaction_shape_invalid";
}

/** A withdrawal without a recipient (none, 0x0) or paid to the Pool itself: the Pool would refuse it or strand the tokens. */
export class InvalidRecipientError extends TransactionShapeError {
  override name = "InvalidRecipientError";
  override readonly code = "invalid_recipient";
}

/** A withdrawal whose fee exceeds the withdrawn amount (or a fee out of range): the Pool refuses it (FeeTooHigh). */
export class FeeTooHighError extends TransactionShapeError {
  override name = "FeeTooHighError";
  override readonly code = "fee_too_high";
}

/** Pool.MAX_AMOUNT: amounts and fees stay below 2^248. */
const MAX_AMOUNT = 2n ** 248n;

export interface TransactionRequest {
  deployment: Deployment;
  tree: MerkleTree;
  keys: AccountKeys;
  asset: Address;
  inputs: SpendInput[];
  outputs: OutputSpec[];
  extAmount?: bigint;
  fee?: bigint;
  recipient?: Address;
  relayer?: Address;
  /** An approved external action (Pool.transactAction): a withdrawal to the route's adapter whose terms the proof binds. */
  action?: ActionTerms;
}

/** The circuit's input signals (decimal strings) and what they commit to. Secret: stays in the client. */
export interface Witness {
  signals: Record<string, string | string[] | string[][]>;
  publicInputs: PublicInputs;
  extData: ExtData;
  outputNotes: [Note, Note];
}

/**
 * Builds a join-split's witness: up to two notes of `keys` spent, up to two outputs created, and
 * extAmount (0 for a send, negative for a withdrawal to `recipient`) minus the fee leaving the Pool.
 * Missing inputs and outputs are zero-amount dummies with fresh random keys.
 */
export function buildWitness(args: TransactionRequest): Witness {
  const { deployment, tree, keys, asset } = args;
  const extAmount = args.extAmount ?? 0n;
  const fee = args.fee ?? 0n;
  if (args.inputs.length > 2 || args.outputs.length > 2) throw new TransactionShapeError("a join-split spends at most 2 notes and creates at most 2");
  if (extAmount > 0n) throw new TransactionShapeError("extAmount must be 0 (send) or negative (withdrawal); deposits use Pool.deposit");
  if (extAmount <= -MAX_AMOUNT) throw new TransactionShapeError(`extAmount ${extAmount} is beyond -2^248`);
  if (fee < 0n || fee >= MAX_AMOUNT) throw new FeeTooHighError(`fee ${fee} is not in [0, 2^248)`);
  // Refused before anything is proved: the Pool would refuse these too, after a wasted proof.
  if (extAmount < 0n) {
    const recipient = args.recipient;
    if (recipient === undefined || BigInt(recipient) === 0n) throw new InvalidRecipientError("a withdrawal needs a recipient; none (or 0x0) was given");
    if (recipient.toLowerCase() === deployment.poolAddress.toLowerCase()) throw new InvalidRecipientError("a withdrawal to the Pool itself would strand the tokens");
    if (fee > -extAmount) throw new FeeTooHighError(`fee ${fee} exceeds the withdrawn amount ${-extAmount}`);
  }
  for (const input of args.inputs) {
    if (input.note.asset !== asset) throw new TransactionShapeError(`input note is ${input.note.asset}, the transaction is ${asset}`);
    if (input.note.ownerPublicKey !== keys.notePublicKey) throw new TransactionShapeError("an input note is not owned by these keys");
  }
  const sumIn = args.inputs.reduce((s, i) => s + i.note.amount, 0n);
  const sumOut = args.outputs.reduce((s, o) => s + o.amount, 0n);
  if (sumIn + extAmount - fee !== sumOut) {
    throw new TransactionShapeError(`value is not conserved: inputs ${sumIn} + extAmount ${extAmount} - fee ${fee} != outputs ${sumOut}`);
  }

  // Inputs: the real notes, then dummies: amount 0 under a fresh random key (the circuit derives the
  // owner key from it), any path, since a zero-amount input's root is not checked.
  const ins = [0, 1].map((i) => {
    const real = args.inputs[i];
    if (real) return { note: real.note, leafIndex: real.leafIndex, spendingKey: keys.spendingKey, path: tree.path(real.leafIndex) };
    const spendingKey = randomFieldElement();
    const note: Note = { amount: 0n, asset, ownerPublicKey: poseidon1([spendingKey]), blinding: randomFieldElement() };
    return { note, leafIndex: 0, spendingKey, path: tree.zeros.slice(0, tree.levels) };
  });

  const outs: Array<{ note: Note; encryptionKey: Hex }> = [0, 1].map((i) => {
    const spec = args.outputs[i];
    const to = spec?.to ?? { notePublicKey: keys.notePublicKey, encryptionPublicKey: keys.encryption.publicKey };
    return { note: { amount: spec?.amount ?? 0n, asset, ownerPublicKey: to.notePublicKey, blinding: randomFieldElement() }, encryptionKey: to.encryptionPublicKey };
  });

  const extData: ExtData = {
    recipient: args.recipient ?? zeroAddress,
    extAmount,
    relayer: args.relayer ?? zeroAddress,
    fee,
    encryptedOutput1: encryptNote(outs[0]!.note, outs[0]!.encryptionKey),
    encryptedOutput2: encryptNote(outs[1]!.note, outs[1]!.encryptionKey),
  };
  const publicInputs: PublicInputs = {
    root: tree.root,
    publicAmount: publicAmountOf(extAmount, fee),
    extDataHash: args.action ? hashActionExtData(deployment, asset, extData, args.action) : hashExtData(deployment, asset, extData),
    asset,
    domain: deployment.domain,
    inputNullifiers: [nullifierOf(ins[0]!.note, ins[0]!.leafIndex, ins[0]!.spendingKey, deployment.domain), nullifierOf(ins[1]!.note, ins[1]!.leafIndex, ins[1]!.spendingKey, deployment.domain)],
    outputCommitments: [commitmentOf(outs[0]!.note), commitmentOf(outs[1]!.note)],
  };

  const str = (x: bigint | number) => x.toString();
  const signals = {
    root: str(publicInputs.root),
    publicAmount: str(publicInputs.publicAmount),
    extDataHash: str(publicInputs.extDataHash),
    asset: str(BigInt(asset)),
    domain: str(deployment.domain),
    inputNullifier: publicInputs.inputNullifiers.map(str),
    outputCommitment: publicInputs.outputCommitments.map(str),
    inAmount: ins.map((i) => str(i.note.amount)),
    inPrivateKey: ins.map((i) => str(i.spendingKey)),
    inBlinding: ins.map((i) => str(i.note.blinding)),
    inLeafIndex: ins.map((i) => str(i.leafIndex)),
    inPathElements: ins.map((i) => i.path.map(str)),
    outAmount: outs.map((o) => str(o.note.amount)),
    outPrecommitment: outs.map((o) => str(precommitmentOf(o.note))),
  };
  return { signals, publicInputs, extData, outputNotes: [outs[0]!.note, outs[1]!.note] };
}

/** The proof's public signals, in the circuit's order (circuits/README.md). */
export function publicSignalsOf(inputs: PublicInputs): bigint[] {
  return [inputs.root, inputs.publicAmount, inputs.extDataHash, BigInt(inputs.asset), inputs.domain, ...inputs.inputNullifiers, ...inputs.outputCommitments];
}

/**
 * Builds the witness and proves it: the result is ready for Pool.transact or a relayer. The prover has
 * verified the proof with the pinned key; it must also be a proof of these public inputs, the ones
 * that are sent.
 */
export async function prepareTransaction(args: TransactionRequest & { prover: Prover }): Promise<PreparedWithNotes> {
  const { signals, publicInputs, extData, outputNotes } = buildWitness(args);
  const { proof, publicSignals } = await args.prover.prove(signals);
  const expected = publicSignalsOf(publicInputs);
  if (publicSignals.length !== expected.length || publicSignals.some((x, i) => x !== expected[i])) {
    throw new ProofVerificationError("the prover returned a proof of other public inputs than the transaction's; it was not returned");
  }
  return { transaction: { proof, publicInputs, extData }, outputNotes };
}
