import { getAddress, type Address, type PublicClient } from "viem";
import { QueueDevstackError } from "../../src/errors/index.ts";

export class PinError extends QueueDevstackError {
  override name = "PinError";
  readonly code = "pin_failed";
}

async function hasCode(client: PublicClient, address: Address, blockNumber: bigint): Promise<boolean> {
  const code = await client.getCode({ address, blockNumber });
  return code !== undefined && code !== "0x";
}

/**
 * Pins an existing Pool: checks it has code at the fork block and settles its deployment block, either
 * checking the one given (code there, none the block before) or finding the first block with code by
 * bisection (about log2(head) historical reads, served by the upstream through the fork).
 */
export async function pinPool(args: {
  client: PublicClient;
  pool: string;
  atBlock: bigint;
  deploymentBlock?: bigint | undefined;
}): Promise<{ pool: Address; deploymentBlock: bigint }> {
  const { client, atBlock } = args;
  let pool: Address;
  try {
    pool = getAddress(args.pool);
  } catch {
    throw new PinError(`--pool ${args.pool} is not an address`);
  }
  if (!(await hasCode(client, pool, atBlock))) throw new PinError(`no contract code at ${pool} at block ${atBlock}: nothing to pin`);

  if (args.deploymentBlock !== undefined) {
    const n = args.deploymentBlock;
    if (n > atBlock) throw new PinError(`--deployment-block ${n} is after the fork block ${atBlock}`);
    if (!(await hasCode(client, pool, n))) throw new PinError(`the Pool has no code at --deployment-block ${n}`);
    if (n > 0n && (await hasCode(client, pool, n - 1n))) {
      throw new PinError(`the Pool already had code at block ${n - 1n}: --deployment-block ${n} is not its deployment block`);
    }
    return { pool, deploymentBlock: n };
  }
  let low = 0n;
  let high = atBlock; // invariant: code at high
  while (low < high) {
    const mid = (low + high) / 2n;
    if (await hasCode(client, pool, mid)) high = mid;
    else low = mid + 1n;
  }
  return { pool, deploymentBlock: high };
}
