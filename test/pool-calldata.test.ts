import { encodeFunctionData } from "viem";
import { describe, expect, it } from "vitest";
import { poolAbi } from "../src/chain/pool-abi.ts";
import { poolCall, transactCalldata } from "../src/chain/pool-call.ts";
import type { FinalizeRequest, RelayRequest } from "../src/schemas/request.ts";

// The writer signs, and the admission simulates, transactCalldata's bytes: its selector and parameter
// types are resolved once, so they must stay what viem's encodeFunctionData makes by name.
const n = (i: number) => String(10n ** 70n + BigInt(i));
const relay: RelayRequest = {
  deployment: { chainId: 11155111, poolAddress: "0x1111111111111111111111111111111111111111", domain: `0x${"12".repeat(32)}` },
  proof: { a: [n(1), n(2)], b: [[n(3), n(4)], [n(5), n(6)]], c: [n(7), n(8)] },
  publicInputs: { root: n(9), publicAmount: n(10), extDataHash: n(11), asset: "0x2222222222222222222222222222222222222222", domain: n(12), inputNullifiers: [n(13), n(14)], outputCommitments: [n(15), n(16)] },
  extData: { recipient: "0x3333333333333333333333333333333333333333", extAmount: "-5000", relayer: "0x4444444444444444444444444444444444444444", fee: "7", encryptedOutput1: `0x${"ab".repeat(150)}`, encryptedOutput2: "0x" },
} as RelayRequest;
const action = {
  routeId: `0x${"55".repeat(32)}`, outputAsset: "0x6666666666666666666666666666666666666666", minOutput: "99", outputPrecommitment: n(17),
  deadline: "1900000000", finalizeFee: "3", quoteId: `qt_${"77".repeat(32)}`, finalizer: "0x8888888888888888888888888888888888888888",
};
const finalize = { deployment: relay.deployment, reservationId: `0x${"99".repeat(32)}` } as FinalizeRequest;

describe("transactCalldata", () => {
  it.each([
    ["transact", relay],
    ["transactAction", { ...relay, action } as RelayRequest],
    ["finalize", finalize],
  ] as const)("%s: the bytes encodeFunctionData makes, on every call", (name, request) => {
    const call = poolCall(request);
    expect(call.functionName).toBe(name);
    const expected = encodeFunctionData({ abi: poolAbi, ...call } as never);
    expect(transactCalldata(request)).toBe(expected);
    expect(transactCalldata(request)).toBe(expected);
  });
});
