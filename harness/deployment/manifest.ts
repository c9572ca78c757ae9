import path from "node:path";
import { erc20Abi, hexToString, keccak256, numberToHex, parseUnits, type Address, type Hex, type PublicClient } from "viem";
import { actionReadAbi, poolReadAbi, ROUTE_KINDS } from "../../src/chain/abi.ts";
import type { ProofSystemName } from "../../src/chain/dev-proof.ts";
import { readProofSystem } from "../../src/chain/verify-deployment.ts";
import { ACTION_PARAMETERS, DeploymentConfig, type ExternalActionRoute } from "../../src/config/deployment-config.ts";
import { QUEUE_PATHS } from "../../src/paths.ts";
import type { CircuitManifest } from "./circuit.ts";
import type { CompiledFixtures } from "./fixtures.ts";

/** Default relay fees: one hundredth of a token, in base units, for every asset and action. */
export function defaultRelayFee(decimals: number): bigint {
  return parseUnits("0.01", decimals);
}

/** Default finalize fee: one ten-thousandth of a token (a finalize is a cheap transaction, and it is paid from the output). */
export function defaultFinalizeFee(decimals: number): bigint {
  return parseUnits("0.0001", decimals);
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
  circuit: CircuitManifest;
  /**
   * The external routes to describe, each checked against Pool.routes now; by default those the Pool's
   * logs name. A loaded fork bundle's chain holds no upstream logs: its manifest's routes are given.
   */
  routeIds?: Hex[];
}): Promise<DeploymentConfig> {
  const { client, pool, fixtures } = args;
  const read = <T>(functionName: string, fnArgs?: readonly unknown[]) =>
    client.readContract({ address: pool, abi: poolReadAbi, functionName, args: fnArgs } as never) as Promise<T>;

  const [chainId, code, block, domain, verifier, levels, accountRegistry, receiveDirectory, assetAddresses] = await Promise.all([
    client.getChainId(),
    client.getCode({ address: pool }),
    client.getBlock({ blockNumber: args.deploymentBlock }),
    read<bigint>("domain"),
    read<Address>("verifier"),
    read<number>("levels"),
    read<Address>("accountRegistry"),
    read<Address>("receiveDirectory"),
    read<Address[]>("supportedAssets"),
  ]);
  if (code === undefined || code === "0x") throw new Error(`no Pool code at ${pool}`);
  if (levels !== args.circuit.levels) {
    throw new Error(`the Pool's tree has depth ${levels}, but the proof files are for depth ${args.circuit.levels}: they cannot prove for it`);
  }
  const verifierCode = await client.getCode({ address: verifier });
  if (verifierCode === undefined || verifierCode === "0x") throw new Error(`no verifier code at ${verifier}`);
  const proofSystem = await readProofSystem(client, verifier, chainId);

  const assets = await Promise.all(
    assetAddresses.map(async (address) => {
      const token = (functionName: "name" | "symbol" | "decimals") => client.readContract({ address, abi: erc20Abi, functionName });
      const [name, symbol, decimals] = await Promise.all([token("name"), token("symbol"), token("decimals")]);
      return { address, standard: "erc20" as const, name: name as string, symbol: symbol as string, decimals: decimals as number };
    }),
  );
  const assetList = assets.map((a) => a.address);
  const externalRoutes = args.relayer === null ? [] : await approvedRoutes(client, pool, args.deploymentBlock, assetList, args.routeIds);

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
    // A runtime without a relayer offers no action routes.
    routes:
      args.relayer === null
        ? []
        : [
            { action: "send", submit: QUEUE_PATHS.sendRelay, status: QUEUE_PATHS.sendStatus, assets: assetList },
            { action: "withdraw", submit: QUEUE_PATHS.withdrawRelay, status: QUEUE_PATHS.withdrawStatus, assets: assetList },
            ...externalRoutes,
          ],
    relayFees: {
      relayer: args.relayer,
      fees: assets.map((a) => {
        const fee = defaultRelayFee(a.decimals).toString();
        return { asset: a.address, send: fee, withdraw: fee };
      }),
      actions: externalRoutes.flatMap((route) =>
        assets.map((a) => ({ route: route.id, asset: a.address, action: defaultRelayFee(a.decimals).toString(), finalize: defaultFinalizeFee(a.decimals).toString() })),
      ),
    },
    queue: { endpoints: QUEUE_PATHS, proof: proofSection(args.circuit, verifier, keccak256(verifierCode), proofSystem) },
  });
}

/**
 * The routes the Pool approved (RouteApproved and RouteRevoked since its deployment, each checked
 * against Pool.routes now), in id order, with their adapters' code and kind. The fixture adapters
 * trade any supported asset for any other.
 */
async function approvedRoutes(client: PublicClient, pool: Address, fromBlock: bigint, assets: Address[], given?: Hex[]): Promise<ExternalActionRoute[]> {
  const logged = async () => (await client.getLogs({ address: pool, events: actionReadAbi.filter((item) => item.type === "event"), fromBlock, toBlock: "latest" })).map((log) => (log.args as { routeId: Hex }).routeId);
  const ids = [...new Set(given ?? (await logged()))].sort();
  const routes: ExternalActionRoute[] = [];
  for (const id of ids) {
    const [adapter, codeHash, kindIndex] = await client.readContract({ address: pool, abi: actionReadAbi, functionName: "routes", args: [id] });
    if (BigInt(adapter) === 0n) continue; // revoked
    const code = await client.getCode({ address: adapter });
    if (code === undefined || keccak256(code) !== codeHash) continue; // the Pool refuses a changed adapter
    // The kind the Pool registered at approval, not what the adapter says of itself.
    const kind = ROUTE_KINDS[kindIndex];
    if (kind === undefined) throw new Error(`route ${id}: the Pool registered an unknown kind ${kindIndex}`);
    routes.push({
      action: "external",
      id,
      name: hexToString(id, { size: 32 }).replace(/\0+$/, ""),
      kind,
      quote: QUEUE_PATHS.quote,
      submit: QUEUE_PATHS.withdrawRelay,
      status: QUEUE_PATHS.withdrawStatus,
      finalize: QUEUE_PATHS.finalize,
      inputAssets: assets,
      outputAssets: assets,
      adapter: { address: adapter, runtimeCodeHash: codeHash },
      parameters: { ...ACTION_PARAMETERS },
    });
  }
  return routes;
}

const ARTIFACT_KINDS: Record<string, { role: "wasm" | "zkey" | "verificationKey"; contentType: string }> = {
  ".wasm": { role: "wasm", contentType: "application/wasm" },
  ".zkey": { role: "zkey", contentType: "application/octet-stream" },
  ".json": { role: "verificationKey", contentType: "application/json" },
};

/**
 * The manifest's proof section: the circuit's files (the runtime's own, served under its artifacts
 * prefix), the Pool's verifier and what it expects. A dev-proof stack serves the same files: its
 * clients still compute the full witness with the wasm.
 */
export function proofSection(circuit: CircuitManifest, verifier: Address, verifierCodeHash: `0x${string}`, system: ProofSystemName) {
  const artifacts = circuit.files.map((f) => {
    const kind = ARTIFACT_KINDS[path.extname(f.file)];
    if (!kind) throw new Error(`unknown proof artifact type: ${f.file}`);
    return { name: f.file, ...kind, path: `${QUEUE_PATHS.artifacts}/${f.file}`, sha256: `0x${f.sha256}`, size: f.bytes };
  });
  const vk = artifacts.find((a) => a.role === "verificationKey");
  if (!vk) throw new Error("the circuit build has no verification key");
  return {
    system,
    curve: "bn128",
    circuit: `${circuit.circuit}-2x2`,
    treeDepth: circuit.levels,
    publicInputs: circuit.publicInputs,
    verifier: { address: verifier, runtimeCodeHash: verifierCodeHash },
    verificationKeySha256: vk.sha256,
    artifacts,
  };
}

/** The manifest's exact bytes: what the file holds and what GET /api/queue/config serves. */
export function manifestBytes(config: DeploymentConfig): Uint8Array {
  return Buffer.from(`${JSON.stringify(config, null, 2)}\n`);
}
