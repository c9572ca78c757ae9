import type { PublicClient } from "viem";

export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** What the relayer offers now: viem's EIP-1559 estimate (2 x base fee + tip). */
export async function currentFees(chain: PublicClient): Promise<Fees> {
  const { maxFeePerGas, maxPriorityFeePerGas } = await chain.estimateFeesPerGas();
  return { maxFeePerGas, maxPriorityFeePerGas };
}

/** A replacement's fees: both fields raised by at least `percent`, and never below the current market. */
export function bumpedFees(previous: Fees, market: Fees, percent: number): Fees {
  const bump = (x: bigint) => (x * BigInt(100 + percent) + 99n) / 100n;
  const maxPriorityFeePerGas = [bump(previous.maxPriorityFeePerGas), market.maxPriorityFeePerGas].reduce((a, b) => (a > b ? a : b));
  const maxFeePerGas = [bump(previous.maxFeePerGas), market.maxFeePerGas, maxPriorityFeePerGas].reduce((a, b) => (a > b ? a : b));
  return { maxFeePerGas, maxPriorityFeePerGas };
}
