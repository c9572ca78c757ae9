import { isDeepStrictEqual } from "node:util";
import { getAddress, keccak256, type Hex } from "viem";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import { loadCircuitManifest, loadFixtures, proofSection } from "../deployment/index.ts";
import { relayerAddress } from "./store-check.ts";

/** An account of anvil's dump, as the bundle's chain part was checked to hold. */
type DumpAccount = { code: string };

/**
 * A bundle's manifest against what needs no running chain: the runtime's own constants (the fixtures'
 * ABIs, the proof files it serves, the relayer) and the chain dump's code (every contract it names has
 * code there, the Pool's, the verifier's and each adapter's under the hash it gives). Checked before
 * anything starts, for a local and a fork bundle alike; what only the running chain can say (the Pool's
 * domain, its assets' names, the deployment block's hash) is checked once it runs. Null, or what differs.
 */
export async function manifestAgainstConstants(manifest: DeploymentConfig, accounts: Record<string, DumpAccount>, forkBundle: boolean): Promise<string | null> {
  const [fixtures, circuit] = await Promise.all([loadFixtures(), loadCircuitManifest()]);
  const code = new Map(Object.entries(accounts).map(([address, account]) => [address.toLowerCase(), account.code]));
  const codeOf = (address: string) => {
    const found = code.get(address.toLowerCase());
    return found === undefined || found === "0x" ? null : (found as Hex);
  };
  if (manifest.relayFees.relayer === null || getAddress(manifest.relayFees.relayer) !== relayerAddress()) return `relayFees.relayer is ${manifest.relayFees.relayer}, not the stack's relayer ${relayerAddress()}`;
  if (!isDeepStrictEqual(manifest.accountRegistry.abi, fixtures.contracts.AccountRegistry.abi)) return "accountRegistry.abi is not the AccountRegistry's";
  if (!isDeepStrictEqual(manifest.receiveDirectory.abi, fixtures.contracts.ReceiveDirectory.abi)) return "receiveDirectory.abi is not the ReceiveDirectory's";
  const { verifier } = manifest.queue.proof;
  const expected = proofSection(circuit, verifier.address as Hex, verifier.runtimeCodeHash as Hex, manifest.queue.proof.system);
  if (!isDeepStrictEqual(JSON.parse(JSON.stringify(manifest.queue.proof)), JSON.parse(JSON.stringify(expected)))) return "queue.proof is not the proof files this runtime serves";
  // The contracts a relay runs: their code is in any bundle (a fork's holds what its relays read).
  const hashed: Array<[string, string, string | null]> = [
    ["poolAddress", manifest.poolAddress, manifest.poolRuntimeCodeHash],
    ["queue.proof.verifier", verifier.address, verifier.runtimeCodeHash],
    ...manifest.assets.map((asset, i): [string, string, null] => [`assets.${i}`, asset.address, null]),
    ...manifest.routes.flatMap((route, i): Array<[string, string, string]> => (route.action === "external" ? [[`routes.${i}.adapter`, route.adapter.address, route.adapter.runtimeCodeHash]] : [])),
  ];
  // The Pool's companions, which a relay never calls: a fork bundle saved before they were added to it
  // may not hold them; held, they must be contracts.
  for (const [what, address] of [["accountRegistry", manifest.accountRegistry.address], ["receiveDirectory", manifest.receiveDirectory.address]] as const) {
    if (code.has(address.toLowerCase()) || !forkBundle) hashed.push([what, address, null]);
  }
  for (const [what, address, hash] of hashed) {
    const found = codeOf(address);
    if (found === null) return `${what} (${address}) has no code in the bundle's chain`;
    if (hash !== null && keccak256(found).toLowerCase() !== hash.toLowerCase()) return `${what} (${address}) has code of hash ${keccak256(found)} in the bundle's chain, the manifest says ${hash}`;
  }
  return null;
}
