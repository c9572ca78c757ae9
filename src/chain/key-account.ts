import { createECDH } from "node:crypto";
import type { Hex } from "viem";
import { publicKeyToAddress, sign, signAuthorization, signMessage, signTransaction, signTypedData, toAccount, type PrivateKeyAccount } from "viem/accounts";

/**
 * viem's privateKeyToAccount, its public key derived by node:crypto. noble's first public key builds
 * secp256k1's precomputed tables (about 25 ms of CPU, --cpu-prof), and a start only needs the address
 * (the relayer's, the dev deployer's): the tables are built on the first signature instead.
 */
export function keyAccount(privateKey: Hex): PrivateKeyAccount {
  const publicKey = publicKeyOf(privateKey);
  const account = toAccount({
    address: publicKeyToAddress(publicKey),
    sign: ({ hash }) => sign({ hash, privateKey, to: "hex" }),
    signAuthorization: (authorization) => signAuthorization({ ...authorization, privateKey }),
    signMessage: ({ message }) => signMessage({ message, privateKey }),
    signTransaction: (transaction, { serializer } = {}) => signTransaction({ privateKey, transaction, serializer }),
    signTypedData: (typedData) => signTypedData({ ...typedData, privateKey } as Parameters<typeof signTypedData>[0]),
  });
  return { ...account, publicKey, source: "privateKey" } as PrivateKeyAccount;
}

/** The uncompressed public key; a key that is not one (its value never in the message) is a RangeError. */
function publicKeyOf(privateKey: Hex): Hex {
  if (typeof privateKey !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(privateKey)) throw new RangeError("a private key must be 0x and 64 hex digits");
  const ecdh = createECDH("secp256k1");
  try {
    ecdh.setPrivateKey(Buffer.from(privateKey.slice(2), "hex"));
  } catch {
    throw new RangeError("the private key is not a secp256k1 key (zero, or not below the curve's order)");
  }
  return `0x${ecdh.getPublicKey("hex", "uncompressed")}`;
}
