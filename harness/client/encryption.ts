import { createCipheriv, createDecipheriv, createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, randomBytes } from "node:crypto";
import type { Hex } from "viem";

/**
 * Note encryption: ephemeral X25519 key agreement with the recipient's published encryption key,
 * HKDF-SHA256, then AES-256-GCM. Ciphertext layout: ephemeralPublicKey (32) | iv (12) | tag (16) | body.
 * Only the recipient's secret key can open it; a wrong key fails authentication (null), it never
 * yields garbage.
 */
const INFO = Buffer.from("queue-devstack note v1");
const X25519_SPKI_PREFIX = Buffer.from("302a300506032b656e032100", "hex");
const X25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b656e04220420", "hex");

export interface EncryptionKeyPair {
  /** 32-byte X25519 public key: published in the AccountRegistry. */
  publicKey: Hex;
  /** 32-byte X25519 secret key: never leaves the client. */
  secretKey: Hex;
}

export function generateEncryptionKeyPair(): EncryptionKeyPair {
  const { publicKey, privateKey } = generateKeyPairSync("x25519");
  const pub = publicKey.export({ format: "der", type: "spki" }).subarray(X25519_SPKI_PREFIX.length);
  const sec = privateKey.export({ format: "der", type: "pkcs8" }).subarray(X25519_PKCS8_PREFIX.length);
  return { publicKey: `0x${pub.toString("hex")}`, secretKey: `0x${sec.toString("hex")}` };
}

const publicKeyObject = (raw: Hex) => createPublicKey({ key: Buffer.concat([X25519_SPKI_PREFIX, Buffer.from(raw.slice(2), "hex")]), format: "der", type: "spki" });
const secretKeyObject = (raw: Hex) => createPrivateKey({ key: Buffer.concat([X25519_PKCS8_PREFIX, Buffer.from(raw.slice(2), "hex")]), format: "der", type: "pkcs8" });

function deriveKey(shared: Buffer, ephemeralPublic: Buffer, recipientPublic: Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", shared, Buffer.concat([ephemeralPublic, recipientPublic]), INFO, 32));
}

// Uint8Array, not Buffer, in what is exported: the public types need no @types/node.
export function encryptTo(recipientPublicKey: Hex, plaintext: Uint8Array): Hex {
  const ephemeral = generateEncryptionKeyPair();
  const recipient = Buffer.from(recipientPublicKey.slice(2), "hex");
  const ephemeralPublic = Buffer.from(ephemeral.publicKey.slice(2), "hex");
  const shared = diffieHellman({ privateKey: secretKeyObject(ephemeral.secretKey), publicKey: publicKeyObject(recipientPublicKey) });
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", deriveKey(shared, ephemeralPublic, recipient), iv);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return `0x${Buffer.concat([ephemeralPublic, iv, cipher.getAuthTag(), body]).toString("hex")}`;
}

/** Opens a ciphertext with our keys; null when it was not encrypted to us (or was tampered with). */
export function decryptWith(keys: EncryptionKeyPair, ciphertext: Hex): Uint8Array | null {
  const data = Buffer.from(ciphertext.slice(2), "hex");
  if (data.length < 60) return null;
  const ephemeralPublic = data.subarray(0, 32);
  try {
    const shared = diffieHellman({ privateKey: secretKeyObject(keys.secretKey), publicKey: publicKeyObject(`0x${ephemeralPublic.toString("hex")}`) });
    const decipher = createDecipheriv("aes-256-gcm", deriveKey(shared, ephemeralPublic, Buffer.from(keys.publicKey.slice(2), "hex")), data.subarray(32, 44));
    decipher.setAuthTag(data.subarray(44, 60));
    return Buffer.concat([decipher.update(data.subarray(60)), decipher.final()]);
  } catch {
    return null;
  }
}
