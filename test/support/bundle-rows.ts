import { gunzipSync, gzipSync } from "node:zlib";
import { keccak256 } from "viem";
import { mnemonicToAccount } from "viem/accounts";

// A bundle's store rows (format version 2: gzip of JSON), and operations as a stack stores them, to
// craft bundles from a real one.

export type Rows = Record<string, Array<Record<string, unknown>>>;
export const rowsOf = (bundle: { store: string }): Rows => JSON.parse(gunzipSync(Buffer.from(bundle.store, "base64")).toString("utf8")) as Rows;
export const storeOf = (rows: Rows) => gzipSync(JSON.stringify(rows)).toString("base64");
export const dev = (index: number) => mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: index });

/** A send's request, well formed, for a bundle's Pool (its manifest's text): its proof is no proof (the Pool reverts it). */
export function sendRequest(manifestText: string, root: string): Record<string, unknown> {
  const manifest = JSON.parse(manifestText) as { chainId: number; poolAddress: string; domain: string; assets: Array<{ address: string }> };
  const random = () => BigInt(keccak256(`0x${Math.random().toString(16).slice(2).padStart(16, "0")}`)) % 2n ** 250n;
  return {
    deployment: { chainId: manifest.chainId, poolAddress: manifest.poolAddress, domain: manifest.domain },
    proof: { a: ["1", "2"], b: [["1", "2"], ["3", "4"]], c: ["1", "2"] },
    publicInputs: { root, publicAmount: "0", extDataHash: "1", asset: manifest.assets[0]?.address, domain: BigInt(manifest.domain).toString(), inputNullifiers: [String(random()), String(random())], outputCommitments: ["1", "2"] },
    extData: { recipient: dev(2).address, extAmount: "0", relayer: dev(1).address, fee: "0", encryptedOutput1: "0x", encryptedOutput2: "0x" },
  };
}

/** An operation's row (and its nullifiers'), as a stack stores them. */
export function operationRow(id: string, state: string, at: string, request: Record<string, unknown>) {
  const nullifiers = (request.publicInputs as { inputNullifiers: string[] }).inputNullifiers;
  return {
    operation: { id, kind: "send", state, idempotency_key: null, request_hash: id, request: JSON.stringify(request), nullifiers: JSON.stringify(nullifiers), reason: null, mined_hash: null, block: null, history: JSON.stringify([{ state: "accepted", at }]), created_at: at, updated_at: at },
    nullifiers: nullifiers.map((nullifier) => ({ nullifier, operation_id: id })),
  };
}
