import { z } from "zod";
import { SEPOLIA_CHAIN_ID } from "./deployment-config.ts";

export const NativeCurrency = z.strictObject({
  name: z.string(),
  symbol: z.string(),
  decimals: z.int(),
});

/** What EIP-3085 `wallet_addEthereumChain` takes, ready to pass as its one parameter. */
export const AddEthereumChainParameter = z
  .strictObject({
    chainId: z.literal("0xaa36a7"),
    chainName: z.string().min(1),
    nativeCurrency: NativeCurrency,
    rpcUrls: z.array(z.url()).min(1),
    blockExplorerUrls: z.array(z.url()).min(1).optional().meta({ description: "absent when the chain has no explorer" }),
  })
  .meta({ description: "EIP-3085 wallet_addEthereumChain parameter: `ethereum.request({ method: 'wallet_addEthereumChain', params: [entry.addEthereumChainParameter] })`" });

export const ChainEntry = z
  .strictObject({
    chainId: z.literal(SEPOLIA_CHAIN_ID),
    chainIdHex: z.literal("0xaa36a7"),
    name: z.string().meta({ description: "the chain's name; a local dev chain says it is local, so nobody mistakes it for the real Sepolia" }),
    nativeCurrency: NativeCurrency.meta({ description: "EIP-3085 nativeCurrency" }),
    explorerUrl: z.url().nullable().meta({ description: "block explorer; null when the chain has none (a local dev chain)" }),
    walletRpcUrl: z.url().meta({ description: "RPC address for an EVM wallet (wallet_addEthereumChain)" }),
    rpcUrl: z.url().meta({ description: "RPC address for the client's chain reads" }),
    addEthereumChainParameter: AddEthereumChainParameter,
  })
  .meta({ description: "A supported chain and its wallet connection parameters" });

export const NetworkList = z
  .strictObject({ supportedChains: z.array(ChainEntry) })
  .meta({ id: "NetworkList", description: "Supported chains (spec §2.2)" });

export type ChainEntry = z.output<typeof ChainEntry>;
export type AddEthereumChainParameter = z.output<typeof AddEthereumChainParameter>;

/** The public Sepolia's name; a runtime in front of another chain with this id is told its own name. */
export const SEPOLIA_CHAIN_NAME = "Sepolia";
const SEPOLIA_NATIVE_CURRENCY = { name: "Sepolia Ether", symbol: "ETH", decimals: 18 } as const;

/** The one entry this runtime serves: its chain, as the client reads it and as a wallet adds it. */
export function describeNetworks(args: { chainName: string; rpcUrl: string; walletRpcUrl: string; explorerUrl: string | null }): NetworkList {
  return NetworkList.parse({
    supportedChains: [
      {
        chainId: SEPOLIA_CHAIN_ID,
        chainIdHex: "0xaa36a7",
        name: args.chainName,
        nativeCurrency: SEPOLIA_NATIVE_CURRENCY,
        explorerUrl: args.explorerUrl,
        walletRpcUrl: args.walletRpcUrl,
        rpcUrl: args.rpcUrl,
        addEthereumChainParameter: {
          chainId: "0xaa36a7",
          chainName: args.chainName,
          nativeCurrency: SEPOLIA_NATIVE_CURRENCY,
          rpcUrls: [args.walletRpcUrl],
          ...(args.explorerUrl === null ? {} : { blockExplorerUrls: [args.explorerUrl] }),
        },
      },
    ],
  });
}
export type NetworkList = z.output<typeof NetworkList>;
