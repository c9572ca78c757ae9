import type { DevStack } from "../../harness/index.ts";
import { hashExtData } from "../../harness/client/index.ts";
import { publicAmountOf } from "../../src/chain/ext-data.ts";
import type { RelayRequest } from "../../src/schemas/request.ts";

/** The notes an unproved send names: its input nullifiers and output commitments. */
export interface UnprovedNotes {
  inputNullifiers: [string, string];
  outputCommitments: [string, string];
}

/**
 * A send to `stack`, well formed in every field and passing every check that needs no chain (the
 * deployment, the relayer and its fee, extDataHash, publicAmount); its proof is no proof, which only
 * the chain (or a runtime's verifier) could tell.
 */
export function unprovedSend(stack: Pick<DevStack, "manifest" | "relayer">, notes: UnprovedNotes = { inputNullifiers: ["11", "12"], outputCommitments: ["13", "14"] }): RelayRequest {
  const m = stack.manifest;
  const asset = m.assets[0]?.address as `0x${string}`;
  const fee = BigInt(m.relayFees.fees[0]?.send ?? "0");
  const extData = { recipient: "0x0000000000000000000000000000000000000000", extAmount: "0", relayer: stack.relayer.address, fee: fee.toString(), encryptedOutput1: "0x01", encryptedOutput2: "0x02" } as const;
  const extDataHash = hashExtData({ chainId: m.chainId, poolAddress: m.poolAddress, domain: BigInt(m.domain) }, asset, { ...extData, extAmount: 0n, fee } as never);
  return {
    deployment: { chainId: m.chainId, poolAddress: m.poolAddress, domain: m.domain },
    proof: { a: ["1", "2"], b: [["3", "4"], ["5", "6"]], c: ["7", "8"] },
    publicInputs: { root: "1", publicAmount: publicAmountOf(0n, fee).toString(), extDataHash: extDataHash.toString(), asset, domain: BigInt(m.domain).toString(), ...notes },
    extData,
  };
}
