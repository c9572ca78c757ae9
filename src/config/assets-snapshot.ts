import { z } from "zod";
import { Address, BlockNumber, Bytes32, UintString } from "./primitives.ts";
import { SEPOLIA_CHAIN_ID } from "./deployment-config.ts";

export const AssetsQuery = z.strictObject({
  blockNumber: z
    .string()
    .regex(/^(0|[1-9][0-9]{0,15})$/, "blockNumber must be a non-negative decimal integer")
    .optional()
    .meta({ description: "read at this block instead of the latest" }),
});

export const AssetAtBlock = z.strictObject({
  address: Address,
  symbol: z.string(),
  decimals: z.int(),
  supported: z.boolean().meta({ description: "Pool.isSupportedAsset at the block" }),
  poolBalance: UintString.meta({ description: "the Pool's balance at the block, in base units" }),
  totalSupply: UintString,
});

export const AssetsSnapshot = z
  .strictObject({
    chainId: z.literal(SEPOLIA_CHAIN_ID),
    poolAddress: Address,
    block: z
      .strictObject({ number: BlockNumber, hash: Bytes32, timestamp: z.int() })
      .meta({ description: "the block every value was read at (reads are pinned to this hash, EIP-1898)" }),
    assets: z.array(AssetAtBlock),
  })
  .meta({ id: "AssetsSnapshot", description: "Funding assets at an authenticated block" });

export type AssetsSnapshot = z.output<typeof AssetsSnapshot>;
