import { describe, expect, it } from "vitest";
import { ContractFunctionRevertedError, encodeErrorResult, parseAbi } from "viem";
import { poolAbi } from "../src/chain/pool-abi.ts";
import { revertReason } from "../src/chain/revert.ts";

// Issue 30, item 20: the Pool passes an adapter's revert on unchanged; viem, given the Pool's ABI, cannot
// name it. The runtime names it with the adapter errors it owns (src/chain/abi.ts), as traces do.
const reservationId = `0x${"ab".repeat(32)}` as const;
const reverted = (data: `0x${string}`) => new ContractFunctionRevertedError({ abi: poolAbi, data, functionName: "finalize" });

describe("revertReason", () => {
  it("names an adapter's error passed on by the Pool (NothingToCancel, not 0x2325d03c)", () => {
    const data = encodeErrorResult({ abi: parseAbi(["error NothingToCancel(bytes32 reservationId)"]), errorName: "NothingToCancel", args: [reservationId] });
    expect(data.slice(0, 10)).toBe("0x2325d03c");
    const reason = revertReason("simulation_failed", reverted(data));
    expect(reason).toMatchObject({ code: "simulation_failed", revert: { name: "NothingToCancel", args: [reservationId] } });
    expect(reason.detail).toContain(`adapter (through the Pool) reverted with NothingToCancel(${reservationId})`);
  });

  it("names the Pool's own errors as before, and leaves an unknown one as viem says it", () => {
    const pools = encodeErrorResult({ abi: poolAbi, errorName: "AlreadyFinalized", args: [reservationId] });
    expect(revertReason("reverted", reverted(pools))).toMatchObject({ revert: { name: "AlreadyFinalized" }, detail: expect.stringContaining("the Pool reverted with AlreadyFinalized") });
    const unknown = revertReason("reverted", reverted("0xdeadbeef"));
    expect(unknown).not.toHaveProperty("revert");
    expect(unknown.detail).toContain("0xdeadbeef");
  });
});
