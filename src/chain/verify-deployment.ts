import { keccak256, type Address, type Hex, type PublicClient } from "viem";
import { actionReadAbi, poolReadAbi, ROUTE_KINDS, verifierAbi } from "./abi.ts";
import { describeProofSystem, devProof, type ProofSystemName } from "./dev-proof.ts";
import type { DeploymentConfig } from "../config/deployment-config.ts";
import { QueueDevstackError } from "../errors/index.ts";

export class DeploymentMismatchError extends QueueDevstackError {
  override name = "DeploymentMismatchError";
  readonly code = "deployment_mismatch";
}

/**
 * The runtime refuses to serve a configuration the chain contradicts: wrong chain, no Pool at the
 * address, other code, or a deployment block that is not on this chain.
 */
export async function verifyDeployment(client: PublicClient, config: DeploymentConfig): Promise<void> {
  // Everything is asked at once (one batched round trip where it was four, one after another: the start
  // of every stack waits on it), then judged in the order the checks depend on each other: the first
  // contradiction found is the one reported, as if asked one step at a time.
  const { verifier } = config.queue.proof;
  const proofs = asked(proofsNameCode(client));
  const chainIdAsked = asked(client.getChainId());
  const codeAsked = asked(codeHashOf(client, config.poolAddress as Address, { hash: config.poolRuntimeCodeHash, proofs }));
  const blockAsked = client.getBlock({ blockNumber: BigInt(config.deploymentBlock) }).catch(() => null);
  const verifierAsked = asked(client.readContract({ address: config.poolAddress, abi: poolReadAbi, functionName: "verifier" }));
  const verifierCodeAsked = asked(codeHashOf(client, verifier.address as Address, { hash: verifier.runtimeCodeHash, proofs }));
  const systemAsked = asked(readProofSystem(client, verifier.address as Address, config.chainId));
  const routesAsked = config.routes.map((route) => (route.action === "external" ? asked(readRoute(client, config, route, proofs)) : undefined));
  const chainId = await chainIdAsked;
  const code = await codeAsked;
  const block = await blockAsked;
  if (chainId !== config.chainId) {
    throw new DeploymentMismatchError(`the RPC reports chain id ${chainId}, the manifest says ${config.chainId}`);
  }
  if (code === undefined) {
    throw new DeploymentMismatchError(`no contract at poolAddress ${config.poolAddress}`);
  }
  if (code !== config.poolRuntimeCodeHash) {
    throw new DeploymentMismatchError(`the Pool's runtime code hash is ${code}, the manifest says ${config.poolRuntimeCodeHash}`);
  }
  if (block === null || block.hash !== config.deploymentBlockHash) {
    throw new DeploymentMismatchError(
      `block ${config.deploymentBlock} is ${block?.hash ?? "missing"} on this chain, the manifest says ${config.deploymentBlockHash}`,
    );
  }
  // The verifier, then every route (the first that contradicts the manifest is reported).
  const address = await verifierAsked;
  // Another verifier than the manifest's: its own code is named (one more round trip, on a refusal only).
  const verifierCode = address.toLowerCase() === verifier.address.toLowerCase() ? await verifierCodeAsked : await codeHashOf(client, address);
  if (address.toLowerCase() !== verifier.address.toLowerCase() || verifierCode === undefined || verifierCode !== verifier.runtimeCodeHash) {
    throw new DeploymentMismatchError(`the Pool's verifier is ${address} with code ${verifierCode ?? "none"}, the manifest says ${verifier.address} with code ${verifier.runtimeCodeHash}`);
  }
  const onChain = await systemAsked;
  if (onChain !== config.queue.proof.system) {
    throw new DeploymentMismatchError(`the Pool's verifier expects ${describeProofSystem(onChain)}, the manifest says ${describeProofSystem(config.queue.proof.system)}`);
  }
  for (const [index, route] of config.routes.entries()) {
    const routeAsked = routesAsked[index];
    if (routeAsked === undefined || route.action !== "external") continue;
    const [[adapter, codeHash, kind], adapterCode] = await routeAsked;
    if (adapter.toLowerCase() !== route.adapter.address.toLowerCase() || codeHash !== route.adapter.runtimeCodeHash || adapterCode === undefined || adapterCode !== codeHash || ROUTE_KINDS[kind] !== route.kind) {
      throw new DeploymentMismatchError(`route ${route.name} (${route.id}) is not approved in the Pool as a ${route.kind} route for adapter ${route.adapter.address} with code ${route.adapter.runtimeCodeHash}`);
    }
  }
}

/** A call asked now, its outcome awaited in its turn: a failure meanwhile is no unhandled rejection. */
const asked = <T>(promise: Promise<T>): Promise<T> => {
  promise.catch(() => {});
  return promise;
};

function readRoute(client: PublicClient, config: DeploymentConfig, route: Extract<DeploymentConfig["routes"][number], { action: "external" }>, proofs: Promise<boolean>) {
  return Promise.all([
    client.readContract({ address: config.poolAddress, abi: actionReadAbi, functionName: "routes", args: [route.id as `0x${string}`] }),
    codeHashOf(client, route.adapter.address as Address, { hash: route.adapter.runtimeCodeHash, proofs }),
  ]);
}

/**
 * The hash of the code at an address (undefined: none). When the node's proof (eth_getProof's codeHash)
 * names the hash expected, that answers: a verifier's code is tens of kilobytes, and keccak in
 * JavaScript cost every start 20 ms of CPU. Any other answer is checked against the code itself, hashed
 * here: anvil's proof of a forked account whose code was set (a patch) still names the upstream code,
 * and a node without eth_getProof has none to give. On a fork the proof is not asked to answer at all
 * (proofsNameCode): the upstream's code it names may be what the manifest expects, and not the code.
 */
async function codeHashOf(client: PublicClient, address: Address, expected?: { hash: string; proofs: Promise<boolean> }): Promise<Hex | undefined> {
  if (expected !== undefined) {
    const [proof, trusted] = await Promise.all([client.getProof({ address, storageKeys: [] }).catch(() => null), expected.proofs]);
    const hash = proof?.codeHash?.toLowerCase();
    if (trusted && hash !== undefined && hash === expected.hash.toLowerCase()) return hash as Hex;
  }
  const code = await client.getCode({ address });
  return code === undefined || code === "0x" ? undefined : keccak256(code);
}

/**
 * Whether the node's proofs name an account's code as it is. Not on an anvil fork (anvil_nodeInfo names
 * its upstream): its proof of an upstream account names the upstream's code even once it was replaced on
 * the fork (anvil_setCode, a patch). A node without anvil_nodeInfo is no anvil.
 */
async function proofsNameCode(client: PublicClient): Promise<boolean> {
  const info = (await client.request({ method: "anvil_nodeInfo" } as never).catch(() => null)) as { forkConfig?: { forkUrl?: string | null } } | null;
  return !info?.forkConfig?.forkUrl;
}

/** What a verifier expects, asked of the chain: it accepts a dev proof (DevVerifier), or it does not (a Groth16 verifier refuses every one). */
export async function readProofSystem(client: PublicClient, verifier: Address, chainId: number): Promise<ProofSystemName> {
  const publicSignals = Array<bigint>(9).fill(0n);
  const { a, b, c } = devProof({ verifier, chainId, publicSignals });
  const accepts = await client.readContract({ address: verifier, abi: verifierAbi, functionName: "verifyProof", args: [a, b, c, publicSignals as never] }).catch(() => false);
  return accepts ? "dev" : "groth16";
}
