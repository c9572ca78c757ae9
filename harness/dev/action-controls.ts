import { createWalletClient, http, parseAbi, type Address, type Hex, type PublicClient } from "viem";
import { keyAccount } from "../../src/chain/key-account.ts";
import { sepoliaAt } from "../../src/chain/client.ts";
import type { DeploymentConfig, ExternalActionRoute } from "../../src/config/deployment-config.ts";
import { readReservation } from "../../src/chain/reservation-tracker.ts";

const adapterAbi = parseAbi([
  "function setPrice(address assetIn, address assetOut, uint256 price)",
  "function fill(bytes32 reservationId, uint256 amountOut)",
  "error OnlyPriceSetter()",
  "error OnlyFiller()",
  "error OrderNotOpen(bytes32 reservationId)",
  "error BelowMinimum(uint256 amountOut, uint256 minOutput)",
  "error ActionExpired(uint64 deadline)",
]);

/** The fixture routes, driven from the harness (development only): prices, fills, deadlines. */
export interface ActionControls {
  /** Sets a route's price: output base units per 1e18 input base units (0 removes it: quotes answer 503). */
  setPrice(route: "swap" | "fill", assetIn: Address, assetOut: Address, price: bigint): Promise<void>;
  /** Delivers an async reservation's output (the filler); below its minimum or after its deadline, the Pool refuses. */
  fill(reservationId: Hex, amountOut: bigint): Promise<void>;
  /** Moves chain time past a reservation's deadline and mines a block: its fill can no longer come, and finalize refunds it. */
  passDeadline(reservationId: Hex): Promise<void>;
}

/** Controls for a stack whose fixtures were deployed by `deployerKey` (the price setter and filler). */
export function actionControls(args: { rpcUrl: string; client: PublicClient; config: DeploymentConfig; deployerKey: Hex }): ActionControls {
  // keyAccount: a stack's start builds no secp256k1 tables for it (src/chain/key-account.ts).
  const wallet = createWalletClient({ account: keyAccount(args.deployerKey), chain: sepoliaAt(args.rpcUrl), transport: http(args.rpcUrl) });
  const route = (name: string) => {
    const found = args.config.routes.find((r): r is ExternalActionRoute => r.action === "external" && r.name === name);
    if (!found) throw new Error(`this stack has no ${name} route (a pinned Pool has only its own)`);
    return found.adapter.address as Address;
  };
  const send = async (address: Address, functionName: "setPrice" | "fill", callArgs: readonly unknown[]) => {
    await args.client.simulateContract({ account: wallet.account, address, abi: adapterAbi, functionName, args: callArgs } as never);
    const hash = await wallet.writeContract({ address, abi: adapterAbi, functionName, args: callArgs, gas: 500_000n } as never);
    const receipt = await args.client.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") throw new Error(`${functionName} reverted in ${hash}`);
  };
  const rpc = (method: string, params: unknown[]) => args.client.request({ method, params } as never);
  return {
    setPrice: (name, assetIn, assetOut, price) => send(route(name), "setPrice", [assetIn, assetOut, price]),
    fill: (reservationId, amountOut) => send(route("fill"), "fill", [reservationId, amountOut]),
    async passDeadline(reservationId) {
      const { deadline, blockTimestamp } = await readReservation(args.client, args.config.poolAddress as Address, reservationId);
      const wait = deadline - blockTimestamp + 1n;
      if (wait > 0n) await rpc("evm_increaseTime", [Number(wait)]);
      await rpc("evm_mine", []);
    },
  };
}
