import { parseGwei, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { keyAccount } from "../src/chain/key-account.ts";

const KEYS: Hex[] = [
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d", // anvil's dev account #1
  `0x${"00".repeat(31)}01`,
  "0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140", // the curve's order - 1
];

describe("keyAccount: viem's privateKeyToAccount, its public key by node:crypto", () => {
  it.each(KEYS)("derives the same account and signs alike (%s)", async (key) => {
    const ours = keyAccount(key);
    const viem = privateKeyToAccount(key);
    expect({ address: ours.address, publicKey: ours.publicKey, source: ours.source, type: ours.type }).toEqual({ address: viem.address, publicKey: viem.publicKey, source: viem.source, type: viem.type });
    const transaction = { chainId: 11155111, nonce: 3, to: viem.address, value: 1n, gas: 21_000n, maxFeePerGas: parseGwei("2"), maxPriorityFeePerGas: parseGwei("1") } as const;
    expect(await ours.signTransaction(transaction)).toBe(await viem.signTransaction(transaction));
    expect(await ours.signMessage({ message: "queue" })).toBe(await viem.signMessage({ message: "queue" }));
  });

  it.each([
    ["not hex", "0xnothex"],
    ["short", "0x1234"],
    ["zero", `0x${"00".repeat(32)}`],
    ["the curve's order", "0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"],
  ])("refuses a key that is not one (%s), never quoting it", (_name, key) => {
    let error: unknown;
    try {
      keyAccount(key as Hex);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RangeError);
    expect(String((error as Error).message)).not.toContain(key.slice(2, 12));
  });
});
