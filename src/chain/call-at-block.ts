import { decodeFunctionResult, encodeFunctionData, type Abi, type Address, type ContractFunctionName, type Hex, type PublicClient } from "viem";

/**
 * eth_call pinned to a block *hash* (EIP-1898, requireCanonical): the value belongs to exactly that
 * block, or the call fails if the block left the canonical chain. viem's readContract only takes a
 * number or tag, which a reorg could silently move.
 */
export async function readAtBlockHash<const abi extends Abi, name extends ContractFunctionName<abi, "view">>(
  client: PublicClient,
  args: { address: Address; abi: abi; functionName: name; args?: readonly unknown[]; blockHash: Hex },
): Promise<unknown> {
  const data = encodeFunctionData({ abi: args.abi, functionName: args.functionName, args: args.args } as never);
  const result = (await client.request({
    method: "eth_call",
    params: [{ to: args.address, data }, { blockHash: args.blockHash, requireCanonical: true } as never],
  })) as Hex;
  return decodeFunctionResult({ abi: args.abi, functionName: args.functionName, data: result } as never);
}
