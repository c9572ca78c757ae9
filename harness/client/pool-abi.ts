import { parseAbi } from "viem";
import { poolAbi as runtimePoolAbi } from "../../src/chain/pool-abi.ts";

// The Pool's ABI lives with the runtime (src/), which submits transactions and decodes their errors;
// the client adds the Pool's refusals the runtime's copy does not list yet, so they decode by name.
const known = new Set<string>(runtimePoolAbi.map((item) => `${item.type} ${"name" in item ? item.name : ""}`));
const added = parseAbi(["error WithdrawalToPool()", "error InvalidTreeDepth(uint32 levels)"]).filter((item) => !known.has(`error ${item.name}`));

export const poolAbi = [...runtimePoolAbi, ...added] as const;
