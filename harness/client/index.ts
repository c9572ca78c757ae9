// The client's part of the protocol, for tests and app developers. Secrets (spending keys, note
// openings, blindings) stay in these objects; what leaves is PreparedTransaction: proof and public fields.
import "../../src/node-version-guard.ts"; // first: one line on an older Node, before anything needing 22 runs
export { FIELD_SIZE, randomFieldElement, toField } from "./field.ts";
export { createAccountKeys, recipientOf, type AccountKeys, type RecipientKeys } from "./keys.ts";
export { generateEncryptionKeyPair, encryptTo, decryptWith, type EncryptionKeyPair } from "./encryption.ts";
export { commitmentOf, precommitmentOf, nullifierOf, encryptNote, decryptNote, type Note } from "./note.ts";
export { MerkleTree, ZERO_VALUE } from "./merkle-tree.ts";
export { syncPool, findNotes, type PoolState, type OwnedNote } from "./sync.ts";
export { fetchProofFiles, checkProofFiles, sha256Of, ArtifactIntegrityError, type ProofFiles, type ProofFilePins } from "./proof-files.ts";
export { createProver, closeProvers, ProofVerificationError, ProofSystemMismatchError, WitnessConstraintError, type Prover, type ProverPins, type SolidityProof } from "./prover.ts";
export { devProof, DEV_PROOF_TAG, type ProofSystemName } from "../../src/chain/dev-proof.ts";
export { prepareTransaction, buildWitness, hashExtData, hashActionExtData, publicSignalsOf, TransactionShapeError, InvalidRecipientError, FeeTooHighError, type PreparedTransaction, type PreparedWithNotes, type TransactionRequest, type Witness, type ExtData, type PublicInputs, type Deployment, type ActionTerms } from "./transaction.ts";
export { poolAbi } from "./pool-abi.ts";
export { ForeignOriginError } from "./same-origin.ts";
export { QueueDevstackError } from "../../src/errors/index.ts";
export { deposit, DEPOSIT_GAS } from "./deposit.ts";
export { prepareAction, readReservation, waitForReservation, finalizeReservation, FINALIZE_GAS, finalizedNote, Quote, type PreparedAction, type ReservationState } from "./actions.ts";
export {
  createQueueClient,
  reviewedFrom,
  toRelayRequest,
  memoryJournal,
  ConfigMismatchError,
  ReviewedDeploymentError,
  ReviewedDeployment,
  QueueProblemError,
  PendingOperationError,
  QuoteVerificationError,
  type QueueClient,
  type OperationJournal,
  type JournalEntry,
} from "./queue-client.ts";
