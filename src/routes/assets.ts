import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { BlockNotFoundError, erc20Abi, type Block, type PublicClient } from "viem";
import type { RuntimeContext } from "../context.ts";
import { AssetsQuery, AssetsSnapshot } from "../config/assets-snapshot.ts";
import { poolReadAbi } from "../chain/abi.ts";
import { readAtBlockHash } from "../chain/call-at-block.ts";
import { withinDeadline } from "../chain/deadline.ts";
import { Problem, ProblemError } from "../problem.ts";
import { QUEUE_PATHS } from "../paths.ts";

/** GET /api/queue/assets: funding assets read at one named block (number + hash). */
export const assetsRoutes: FastifyPluginAsyncZod<{ context: RuntimeContext }> = async (app, { context }) => {
  app.get(QUEUE_PATHS.assets, {
    schema: {
      summary: "Funding assets at an authenticated block",
      description:
        "Reads each funding asset's Pool balance, total supply and support flag at one block. The response names the block by number and hash; every read is pinned to that hash (EIP-1898), so the values are that block's and no other's. Defaults to the latest block. A chain that does not answer within the runtime's chain timeout is a 503 chain_unavailable with Retry-After.",
      querystring: AssetsQuery,
      response: { 200: AssetsSnapshot, default: Problem },
    },
    handler: async (request) => {
      const { blockNumber } = request.query;
      return withinDeadline(assetsAt(context, blockNumber === undefined ? undefined : BigInt(blockNumber)), context.chainTimeoutMs);
    },
  });
};

async function assetsAt(context: RuntimeContext, blockNumber: bigint | undefined): Promise<AssetsSnapshot> {
  const block = await resolveBlock(context.chain, blockNumber);
  if (block.number < BigInt(context.config.deploymentBlock)) {
    throw new ProblemError("block_before_deployment", `block ${block.number} precedes the Pool's deployment block ${context.config.deploymentBlock}`);
  }
  return snapshotAt(context, block);
}

async function resolveBlock(chain: PublicClient, blockNumber: bigint | undefined): Promise<Block<bigint, false, "latest">> {
  try {
    return blockNumber === undefined ? await chain.getBlock({ blockTag: "latest" }) : await chain.getBlock({ blockNumber });
  } catch (error) {
    if (error instanceof BlockNotFoundError) {
      throw new ProblemError("block_not_found", `block ${blockNumber} does not exist on this chain`);
    }
    throw new ProblemError("chain_unavailable", "the chain did not answer", { headers: { "retry-after": "1" } });
  }
}

async function snapshotAt(context: RuntimeContext, block: Block<bigint, false, "latest">): Promise<AssetsSnapshot> {
  const { config, chain } = context;
  const blockHash = block.hash;
  const read = (address: `0x${string}`, abi: typeof erc20Abi | typeof poolReadAbi, functionName: string, args?: readonly unknown[]) =>
    readAtBlockHash(chain, { address, abi, functionName, args, blockHash } as never);
  try {
    const assets = await Promise.all(
      config.assets.map(async (asset) => {
        const [poolBalance, totalSupply, supported] = await Promise.all([
          read(asset.address, erc20Abi, "balanceOf", [config.poolAddress]),
          read(asset.address, erc20Abi, "totalSupply"),
          read(config.poolAddress, poolReadAbi, "isSupportedAsset", [asset.address]),
        ]);
        return {
          address: asset.address,
          symbol: asset.symbol,
          decimals: asset.decimals,
          supported: supported as boolean,
          poolBalance: String(poolBalance),
          totalSupply: String(totalSupply),
        };
      }),
    );
    return {
      chainId: config.chainId,
      poolAddress: config.poolAddress,
      block: { number: Number(block.number), hash: blockHash, timestamp: Number(block.timestamp) },
      assets,
    };
  } catch {
    // The block was reorged out between reading it and reading at it, or the chain went away.
    throw new ProblemError("chain_unavailable", "the chain changed or stopped answering while reading; retry", {
      headers: { "retry-after": "1" },
    });
  }
}
