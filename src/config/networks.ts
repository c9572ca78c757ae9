import { z } from "zod";
import { SEPOLIA_CHAIN_ID } from "./deployment-config.ts";

export const NativeCurrency = z.strictObject({
  name: z.string(),
  symbol: z.string(),
  decimals: z.int(),
});

export const ChainEntry = z
  .strictObject({
    chainId: z.literal(SEPOLIA_CHAIN_ID),
    chainIdHex: z.literal("0xaa36a7"),
    name: z.string(),
    nativeCurrency: NativeCurrency.meta({ description: "EIP-3085 nativeCurrency" }),
    explorerUrl: z.url().nullable().meta({ description: "block explorer; null when the chain has none (a local dev chain)" }),
    walletRpcUrl: z.url().meta({ description: "RPC address for an EVM wallet (wallet_addEthereumChain)" }),
    rpcUrl: z.url().meta({ description: "RPC address for the client's chain reads" }),
  })
  .meta({ description: "A supported chain and its wallet connection parameters" });

export const NetworkList = z
  .strictObject({ supportedChains: z.array(ChainEntry) })
  .meta({ id: "NetworkList", description: "Supported chains (spec §2.2)" });

export type ChainEntry = z.output<typeof ChainEntry>;
export type NetworkList = z.output<typeof NetworkList>;
