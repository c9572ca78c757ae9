import { poseidon1 } from "poseidon-lite";
import { generateEncryptionKeyPair, type EncryptionKeyPair } from "./encryption.ts";
import { randomFieldElement } from "./field.ts";

/**
 * A private-payment account's keys. Everything here stays in the client; only notePublicKey and
 * encryption.publicKey are ever published (AccountRegistry.register).
 */
export interface AccountKeys {
  /** Spend secret: a field element. */
  spendingKey: bigint;
  /** Poseidon1(spendingKey): what notes are addressed to. */
  notePublicKey: bigint;
  encryption: EncryptionKeyPair;
}

/** The public half, as a payer finds it in the AccountRegistry. */
export interface RecipientKeys {
  notePublicKey: bigint;
  encryptionPublicKey: `0x${string}`;
}

export function createAccountKeys(spendingKey: bigint = randomFieldElement()): AccountKeys {
  return { spendingKey, notePublicKey: poseidon1([spendingKey]), encryption: generateEncryptionKeyPair() };
}

export function recipientOf(keys: AccountKeys): RecipientKeys {
  return { notePublicKey: keys.notePublicKey, encryptionPublicKey: keys.encryption.publicKey };
}
