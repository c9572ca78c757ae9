import { mkdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { erc20Abi, keccak256, numberToHex, parseUnits, type Address, type PublicClient } from "viem";
import { poolReadAbi } from "../src/chain/abi.ts";
import { DeploymentConfig } from "../src/config/deployment-config.ts";
import { QUEUE_PATHS } from "../src/paths.ts";
import type { CompiledFixtures } from "./fixtures.ts";

/** Default relay fees: one hundredth of a token, in base units, for every asset and action. */
export function defaultRelayFee(decimals: number): bigint {
  return parseUnits("0.01", decimals);
}

/**
 * Describes a deployment from the chain alone: every value is read from the Pool and its companions,
 * so a deployed and a pinned Pool yield their manifest the same way, and it matches the chain by
 * construction.
 */
export async function describeDeployment(args: {
  client: PublicClient;
  pool: Address;
  deploymentBlock: bigint;
  fixtures: CompiledFixtures;
  relayer: Address | null;
}): Promise<DeploymentConfig> {
  const { client, pool, fixtures } = args;
  const read = <T>(functionName: string, fnArgs?: readonly unknown[]) =>
    client.readContract({ address: pool, abi: poolReadAbi, functionName, args: fnArgs } as never) as Promise<T>;

  const [chainId, code, block, domain, accountRegistry, receiveDirectory, assetAddresses] = await Promise.all([
    client.getChainId(),
    client.getCode({ address: pool }),
    client.getBlock({ blockNumber: args.deploymentBlock }),
    read<bigint>("domain"),
    read<Address>("accountRegistry"),
    read<Address>("receiveDirectory"),
    read<Address[]>("supportedAssets"),
  ]);
  if (code === undefined || code === "0x") throw new Error(`no Pool code at ${pool}`);

  const assets = await Promise.all(
    assetAddresses.map(async (address) => {
      const token = (functionName: "name" | "symbol" | "decimals") => client.readContract({ address, abi: erc20Abi, functionName });
      const [name, symbol, decimals] = await Promise.all([token("name"), token("symbol"), token("decimals")]);
      return { address, standard: "erc20" as const, name: name as string, symbol: symbol as string, decimals: decimals as number };
    }),
  );
  const assetList = assets.map((a) => a.address);

  return DeploymentConfig.parse({
    chainId,
    poolAddress: pool,
    domain: numberToHex(domain, { size: 32 }),
    deploymentBlock: Number(args.deploymentBlock),
    deploymentBlockHash: block.hash,
    poolRuntimeCodeHash: keccak256(code),
    accountRegistry: { address: accountRegistry, abi: fixtures.contracts.AccountRegistry.abi },
    receiveDirectory: { address: receiveDirectory, abi: fixtures.contracts.ReceiveDirectory.abi },
    assets,
    // Routes list only what this runtime serves today; send and withdraw join when relaying lands.
    routes: [],
    relayFees: {
      relayer: args.relayer,
      fees: assets.map((a) => {
        const fee = defaultRelayFee(a.decimals).toString();
        return { asset: a.address, send: fee, withdraw: fee };
      }),
    },
    queue: { endpoints: QUEUE_PATHS, proofArtifacts: [] },
  });
}

/** The manifest's exact bytes: what the file holds and what GET /api/queue/config serves. */
export function manifestBytes(config: DeploymentConfig): Buffer {
  return Buffer.from(`${JSON.stringify(config, null, 2)}\n`);
}

/** Writes a file whole or not at all (temp file + rename). */
export async function writeFileAtomic(file: string, data: Buffer | string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, data);
  await rename(tmp, file);
}
