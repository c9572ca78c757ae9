import { encodeDeployData, encodeFunctionData, getContractAddress, parseUnits, stringToHex, type Address, type Hex, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { CHAIN_ID } from "../chain/index.ts";
import type { ProofSystemName } from "../../src/chain/dev-proof.ts";
import type { CompiledFixtures, FixtureName } from "./fixtures.ts";

/** The funding assets a deployed stack gets: different decimals on purpose. */
export const DEV_ASSETS = [
  { name: "Dev USD Coin", symbol: "dUSDC", decimals: 6 },
  { name: "Dev Wrapped Ether", symbol: "dWETH", decimals: 18 },
] as const;

/** Each dev account starts with this many whole tokens of every funding asset. */
export const DEV_TOKEN_GRANT = 1_000_000n;

/** The approved action routes of a deployed stack (the Pool's allowlist), by route id. */
export const ACTION_ROUTES = {
  /** A synchronous swap between the two test assets at a price the harness sets. */
  swap: stringToHex("swap", { size: 32 }),
  /** An asynchronous fill, delivered later (or never) by a filler the harness controls. */
  fill: stringToHex("fill", { size: 32 }),
} as const;

/** Pool.RouteKind's values. */
export const ROUTE_KIND = { sync: 0, async: 1 } as const;

/** Both routes' price at start: 1 dWETH = 3,000 dUSDC, both ways (output base units per 1e18 input base units). */
export const DEFAULT_SWAP_PRICES = { usdcToWeth: 10n ** 36n / 3_000_000_000n, wethToUsdc: 3_000_000_000n } as const;

export interface Deployment {
  pool: Address;
  verifier: Address;
  hashers: { poseidon2: Address; poseidon3: Address };
  accountRegistry: Address;
  receiveDirectory: Address;
  assets: Address[];
  /** The action routes' adapters (approved in the Pool; the deployer sets prices and fills). */
  adapters: { swap: Address; fill: Address };
  /** Block of the Pool's deployment transaction. */
  deploymentBlock: bigint;
}

/**
 * Deploys the fixtures from one deployer with consecutive nonces: all transactions are sent first, in
 * order, and awaited together. On a fresh local chain the deployer starts at nonce 0, so addresses are the same
 * on every run.
 */
export async function deployFixtures(args: {
  client: PublicClient;
  fixtures: CompiledFixtures;
  deployerKey: Hex;
  holders: Address[];
  /** Merkle tree depth: the circuit's. */
  levels: number;
  /**
   * Mine the deployments (automine off) in blocks with these timestamps, 12 s apart from the first,
   * instead of a block per transaction at wall-clock time: the same inputs give the same block hashes.
   */
  mineFrom?: bigint;
  /**
   * What the Pool's verifier expects: "groth16" (JoinSplitVerifier, the default) or "dev" (DevVerifier,
   * DEVELOPMENT ONLY). Deployed at the same nonce, so every address is the same in both modes.
   */
  proofs?: ProofSystemName;
}): Promise<Deployment> {
  const { client, fixtures } = args;
  const account = privateKeyToAccount(args.deployerKey);
  let nonce = await client.getTransactionCount({ address: account.address, blockTag: "pending" });
  const [fees, gasLimit] = await Promise.all([client.estimateFeesPerGas(), client.getBlock().then((b) => b.gasLimit / 2n)]);

  // Signed locally with explicit gas and nonces (nothing is estimated against state the earlier
  // deployments will create), then sent in nonce order and mined together.
  const signed: Hex[] = [];
  const deploy = async (name: FixtureName, constructorArgs: readonly unknown[] = []): Promise<Address> => {
    const { abi, bytecode } = fixtures.contracts[name];
    const address = getContractAddress({ from: account.address, nonce: BigInt(nonce) });
    const data = encodeDeployData({ abi, bytecode, args: constructorArgs as never });
    signed.push(await account.signTransaction({ type: "eip1559", chainId: CHAIN_ID, nonce: nonce++, data, gas: gasLimit, ...fees }));
    return address;
  };

  const verifier = await deploy(args.proofs === "dev" ? "DevVerifier" : "JoinSplitVerifier");
  const poseidon2 = await deploy("Poseidon2");
  const poseidon3 = await deploy("Poseidon3");
  const accountRegistry = await deploy("AccountRegistry");
  const receiveDirectory = await deploy("ReceiveDirectory", [accountRegistry]);
  const assets: Address[] = [];
  for (const asset of DEV_ASSETS) {
    assets.push(await deploy("TestToken", [asset.name, asset.symbol, asset.decimals, args.holders, parseUnits(String(DEV_TOKEN_GRANT), asset.decimals)]));
  }
  const pool = await deploy("Pool", [verifier, poseidon2, poseidon3, accountRegistry, receiveDirectory, assets, args.levels]);
  const swap = await deploy("SwapAdapter", [pool, account.address]);
  const fill = await deploy("FillAdapter", [pool, account.address]);
  const call = async (to: Address, name: "Pool" | "SwapAdapter" | "FillAdapter", functionName: string, callArgs: readonly unknown[]) => {
    const data = encodeFunctionData({ abi: fixtures.contracts[name].abi, functionName, args: callArgs } as never);
    signed.push(await account.signTransaction({ type: "eip1559", chainId: CHAIN_ID, nonce: nonce++, to, data, gas: 200_000n, ...fees }));
  };
  // Each route's kind is registered with it (Pool.RouteKind: 0 sync, 1 async), never inferred from an output.
  await call(pool, "Pool", "approveRoute", [ACTION_ROUTES.swap, swap, ROUTE_KIND.sync]);
  await call(pool, "Pool", "approveRoute", [ACTION_ROUTES.fill, fill, ROUTE_KIND.async]);
  const [usdc, weth] = assets as [Address, Address];
  await call(swap, "SwapAdapter", "setPrice", [usdc, weth, DEFAULT_SWAP_PRICES.usdcToWeth]);
  await call(swap, "SwapAdapter", "setPrice", [weth, usdc, DEFAULT_SWAP_PRICES.wethToUsdc]);
  await call(fill, "FillAdapter", "setPrice", [usdc, weth, DEFAULT_SWAP_PRICES.usdcToWeth]);
  await call(fill, "FillAdapter", "setPrice", [weth, usdc, DEFAULT_SWAP_PRICES.wethToUsdc]);
  // Mining held while they are sent, then blocks mined on demand until all are in: under automine a
  // fork's anvil could queue a transaction that arrived while its predecessor was being mined, and
  // never mine it (fork stacks hung about 1 start in 12 under load).
  await client.request({ method: "evm_setAutomine", params: [false] } as never);
  const pending: Hex[] = [];
  try {
    for (const raw of signed) pending.push(await client.request({ method: "eth_sendRawTransaction", params: [raw] }));
    // As many as fit in each block, in nonce order, until none is left; at fixed timestamps for a genesis.
    for (let block = 0; ; block++) {
      await client.request({ method: "evm_mine", params: args.mineFrom === undefined ? [] : [Number(args.mineFrom + 12n * BigInt(block))] } as never);
      if ((await client.getTransactionCount({ address: account.address, blockTag: "latest" })) === nonce) break;
      if (block > signed.length) throw new Error("fixture deployment: transactions are not being mined");
    }
  } finally {
    await client.request({ method: "evm_setAutomine", params: [true] } as never);
  }

  const receipts = await Promise.all(pending.map((hash) => client.waitForTransactionReceipt({ hash, pollingInterval: 20 })));
  const failed = receipts.find((r) => r.status !== "success");
  if (failed) throw new Error(`fixture deployment reverted in transaction ${failed.transactionHash}`);
  const poolReceipt = receipts.find((r) => r.contractAddress?.toLowerCase() === pool.toLowerCase());
  return { pool, verifier, hashers: { poseidon2, poseidon3 }, accountRegistry, receiveDirectory, assets, adapters: { swap, fill }, deploymentBlock: (poolReceipt as { blockNumber: bigint }).blockNumber };
}
