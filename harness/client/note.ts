import { poseidon2, poseidon3, poseidon4 } from "poseidon-lite";
import { bytesToHex, getAddress, type Address, type Hex } from "viem";
import { decryptWith, encryptTo } from "./encryption.ts";
import type { AccountKeys } from "./keys.ts";

/** A note's opening. Secret: it never leaves the client (only its ciphertext, to its owner). */
export interface Note {
  amount: bigint;
  asset: Address;
  ownerPublicKey: bigint;
  blinding: bigint;
}

/** precommitment = Poseidon2(ownerPublicKey, blinding): what a deposit reveals instead of the key. */
export const precommitmentOf = (note: Pick<Note, "ownerPublicKey" | "blinding">) => poseidon2([note.ownerPublicKey, note.blinding]);

/** commitment = Poseidon3(amount, asset, precommitment): the tree leaf. */
export const commitmentOf = (note: Note) => poseidon3([note.amount, BigInt(note.asset), precommitmentOf(note)]);

/** nullifier = Poseidon4(commitment, leafIndex, Poseidon3(spendingKey, commitment, leafIndex), domain). */
export function nullifierOf(note: Note, leafIndex: number, spendingKey: bigint, domain: bigint): bigint {
  const commitment = commitmentOf(note);
  const signature = poseidon3([spendingKey, commitment, BigInt(leafIndex)]);
  return poseidon4([commitment, BigInt(leafIndex), signature, domain]);
}

/** Plaintext: amount (32) | blinding (32) | asset (20). The owner key is the recipient's own. */
export function encryptNote(note: Note, encryptionPublicKey: Hex): Hex {
  const plaintext = Buffer.alloc(84);
  plaintext.write(note.amount.toString(16).padStart(64, "0"), 0, "hex");
  plaintext.write(note.blinding.toString(16).padStart(64, "0"), 32, "hex");
  plaintext.write(note.asset.slice(2), 64, "hex");
  return encryptTo(encryptionPublicKey, plaintext);
}

/** Opens a note ciphertext and checks it against its on-chain commitment; null if it is not ours. */
export function decryptNote(keys: AccountKeys, ciphertext: Hex, commitment: bigint): Note | null {
  const plaintext = decryptWith(keys.encryption, ciphertext);
  if (plaintext === null || plaintext.length !== 84) return null;
  const note: Note = {
    amount: BigInt(bytesToHex(plaintext.subarray(0, 32))),
    blinding: BigInt(bytesToHex(plaintext.subarray(32, 64))),
    asset: getAddress(bytesToHex(plaintext.subarray(64, 84))),
    ownerPublicKey: keys.notePublicKey,
  };
  return commitmentOf(note) === commitment ? note : null;
}
