import { keccak256, type Address, type PublicClient } from "viem";
import { actionReadAbi, poolReadAbi, ROUTE_KINDS, verifierAbi } from "./abi.ts";
import { describeProofSystem, devProof, type ProofSystemName } from "./dev-proof.ts";
import type { DeploymentConfig } from "../config/deployment-config.ts";

export class DeploymentMismatchError extends Error {
  override name = "DeploymentMismatchError";
}

/**
 * The runtime refuses to serve a configuration the chain contradicts: wrong chain, no Pool at the
 * address, other code, or a deployment block that is not on this chain.
 */
export async function verifyDeployment(client: PublicClient, config: DeploymentConfig): Promise<void> {
  const [chainId, code, block] = await Promise.all([
    client.getChainId(),
    client.getCode({ address: config.poolAddress }),
    client.getBlock({ blockNumber: BigInt(config.deploymentBlock) }).catch(() => null),
  ]);
  if (chainId !== config.chainId) {
    throw new DeploymentMismatchError(`the RPC reports chain id ${chainId}, the manifest says ${config.chainId}`);
  }
  if (code === undefined || code === "0x") {
    throw new DeploymentMismatchError(`no contract at poolAddress ${config.poolAddress}`);
  }
  if (keccak256(code) !== config.poolRuntimeCodeHash) {
    throw new DeploymentMismatchError(`the Pool's runtime code hash is ${keccak256(code)}, the manifest says ${config.poolRuntimeCodeHash}`);
  }
  if (block === null || block.hash !== config.deploymentBlockHash) {
    throw new DeploymentMismatchError(
      `block ${config.deploymentBlock} is ${block?.hash ?? "missing"} on this chain, the manifest says ${config.deploymentBlockHash}`,
    );
  }
  // The verifier and every route at once (one batched round trip each step, not one per route).
  await Promise.all([verifyProofSystem(client, config), ...config.routes.map((route) => (route.action === "external" ? verifyRoute(client, config, route) : undefined))]);
}

async function verifyRoute(client: PublicClient, config: DeploymentConfig, route: Extract<DeploymentConfig["routes"][number], { action: "external" }>): Promise<void> {
  const [[adapter, codeHash, kind], adapterCode] = await Promise.all([
    client.readContract({ address: config.poolAddress, abi: actionReadAbi, functionName: "routes", args: [route.id as `0x${string}`] }),
    client.getCode({ address: route.adapter.address as `0x${string}` }),
  ]);
  if (adapter.toLowerCase() !== route.adapter.address.toLowerCase() || codeHash !== route.adapter.runtimeCodeHash || adapterCode === undefined || keccak256(adapterCode) !== codeHash || ROUTE_KINDS[kind] !== route.kind) {
    throw new DeploymentMismatchError(`route ${route.name} (${route.id}) is not approved in the Pool as a ${route.kind} route for adapter ${route.adapter.address} with code ${route.adapter.runtimeCodeHash}`);
  }
}

/**
 * The Pool's verifier is the manifest's, with its code, and expects the manifest's proof system: it
 * accepts a dev proof exactly when the manifest says "dev" (a Groth16 verifier refuses every one).
 */
async function verifyProofSystem(client: PublicClient, config: DeploymentConfig): Promise<void> {
  const { verifier, system } = config.queue.proof;
  const address = await client.readContract({ address: config.poolAddress, abi: poolReadAbi, functionName: "verifier" });
  const code = await client.getCode({ address });
  if (address.toLowerCase() !== verifier.address.toLowerCase() || code === undefined || keccak256(code) !== verifier.runtimeCodeHash) {
    throw new DeploymentMismatchError(`the Pool's verifier is ${address} with code ${code === undefined ? "none" : keccak256(code)}, the manifest says ${verifier.address} with code ${verifier.runtimeCodeHash}`);
  }
  const onChain = await readProofSystem(client, address, config.chainId);
  if (onChain !== system) {
    throw new DeploymentMismatchError(`the Pool's verifier expects ${describeProofSystem(onChain)}, the manifest says ${describeProofSystem(system)}`);
  }
}

/** What a verifier expects, asked of the chain: it accepts a dev proof (DevVerifier), or it does not (a Groth16 verifier refuses every one). */
export async function readProofSystem(client: PublicClient, verifier: Address, chainId: number): Promise<ProofSystemName> {
  const publicSignals = Array<bigint>(9).fill(0n);
  const { a, b, c } = devProof({ verifier, chainId, publicSignals });
  const accepts = await client.readContract({ address: verifier, abi: verifierAbi, functionName: "verifyProof", args: [a, b, c, publicSignals as never] }).catch(() => false);
  return accepts ? "dev" : "groth16";
}
