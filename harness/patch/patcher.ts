import { existsSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import type { FastifyInstance } from "fastify";
import { encodeAbiParameters, getAddress, hexToBigInt, isAddress, keccak256, numberToHex, type Address, type Hex, type PublicClient } from "viem";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import { codeChanges } from "../../src/code-change.ts";
import { DeploymentMismatchError } from "../../src/chain/verify-deployment.ts";
import type { PatchedContract } from "../../src/config/patched-contract.ts";
import { jsonRpc } from "../chain/index.ts";
import { FIXTURE_CONTRACTS, manifestBytes, type CompiledFixtures, type ContractLayout } from "../deployment/index.ts";
import { writeFileAtomic } from "../files/index.ts";
import { checkStorage, fillImmutables, identifyCode } from "./checks.ts";
import { PatchError } from "./errors.ts";
import { PATCHES_FILE, PatchRecord, PatchRecords } from "./records.ts";
import { readPatchSource } from "./source.ts";

/** What a patch did: the contract, its new code hash, and the one it replaced. */
export interface PatchResult extends PatchedContract {
  previousCodeHash: Hex;
}

export interface Patcher {
  /**
   * Replaces a deployed contract's runtime code in place (anvil_setCode: storage, address and balance
   * kept), after checking the new code keeps its storage layout and immutables; the manifest's code hash,
   * the runtime, stack.json and the health follow. A refusal is a PatchError, the stack left as it was.
   */
  patch(target: string, source: string): Promise<PatchResult>;
  /**
   * The contract's code as the stack started with it again: on a stack loaded from a bundle that carried
   * its patch, the bundle's code; else (or once that is back) the code from before its first patch.
   */
  unpatch(target: string): Promise<PatchResult>;
  /** What is patched now. */
  patches(): PatchedContract[];
  /** After a revert: every patched contract's code as patched (a patch is part of the stack's baseline). */
  reapply(): Promise<void>;
  /**
   * The records a state dir held (loadPatchRecords), at start: the chain already has their code. `loaded`:
   * they came with a bundle, whose code is then what unpatch goes back to first.
   */
  restore(records: readonly PatchRecord[], options?: { loaded?: boolean }): void;
  /** Once the runtime and the dev controls' lock exist: patches then tell the runtime, and queue behind the other controls. */
  attach(args: { runtime: FastifyInstance; lock: { run<T>(work: () => Promise<T>): Promise<T> }; onChange(patches: PatchedContract[]): Promise<void> }): void;
}

const summary = (r: PatchRecord): PatchedContract => ({ name: r.name, address: r.address, codeHash: r.codeHash, source: r.source });

/** Where each contract of the manifest is, by the names a patch takes (lower case). */
function contractsOf(manifest: DeploymentConfig): Array<{ names: string[]; name: string; address: Address }> {
  return [
    { names: ["pool"], name: "Pool", address: manifest.poolAddress as Address },
    { names: ["verifier"], name: "verifier", address: manifest.queue.proof.verifier.address as Address },
    { names: ["registry", "accountregistry"], name: "registry", address: manifest.accountRegistry.address as Address },
    { names: ["directory", "receivedirectory"], name: "directory", address: manifest.receiveDirectory.address as Address },
    ...manifest.routes.flatMap((r) => (r.action === "external" ? [{ names: [r.name.toLowerCase(), `${r.name.toLowerCase()}adapter`], name: r.name, address: r.adapter.address as Address }] : [])),
    ...manifest.assets.map((a) => ({ names: [a.symbol.toLowerCase()], name: a.symbol, address: a.address as Address })),
  ];
}

export function createPatcher(args: {
  client: PublicClient;
  rpcUrl: string;
  manifest: DeploymentConfig;
  manifestPath: string;
  stateDir: string;
  fixtures: CompiledFixtures;
}): Patcher {
  const { client, rpcUrl, manifest, manifestPath } = args;
  const file = path.join(args.stateDir, PATCHES_FILE);
  const known = FIXTURE_CONTRACTS.flatMap((name) => args.fixtures.contracts[name].layout ?? []);
  /** Patched contracts by address (lower case). */
  const records = new Map<string, PatchRecord>();
  /** Every contract ever patched here, and the code it should have after a revert (an unpatched one's original). */
  const intended = new Map<string, { address: Address; code: Hex }>();
  let attached: Parameters<Patcher["attach"]>[0] | undefined;

  const resolve = (target: string): { name: string; address: Address } => {
    const contracts = contractsOf(manifest);
    if (isAddress(target, { strict: false })) {
      const address = getAddress(target);
      return { name: contracts.find((c) => c.address.toLowerCase() === address.toLowerCase())?.name ?? address, address };
    }
    const found = contracts.find((c) => c.names.includes(target.toLowerCase()));
    if (!found) throw new PatchError("unknown_contract", `no contract ${target} in this stack: name one of ${contracts.map((c) => c.name).join(", ")}, or give an address`);
    return { name: found.name, address: found.address };
  };

  /** The manifest's code hashes, where it names them: the Pool's, the verifier's, each route's adapter's (none for a registry, directory or asset). */
  const codeHashes = () => ({
    pool: manifest.poolRuntimeCodeHash,
    verifier: manifest.queue.proof.verifier.runtimeCodeHash,
    adapters: manifest.routes.map((r) => (r.action === "external" ? r.adapter.runtimeCodeHash : null)),
  });
  const setCodeHashes = (hashes: ReturnType<typeof codeHashes>) => {
    manifest.poolRuntimeCodeHash = hashes.pool;
    manifest.queue.proof.verifier.runtimeCodeHash = hashes.verifier;
    manifest.routes.forEach((r, i) => {
      if (r.action === "external") r.adapter.runtimeCodeHash = hashes.adapters[i] ?? r.adapter.runtimeCodeHash;
    });
  };
  const rehash = (address: Address, codeHash: Hex): void => {
    const at = address.toLowerCase();
    const hashes = codeHashes();
    if (manifest.poolAddress.toLowerCase() === at) hashes.pool = codeHash;
    if (manifest.queue.proof.verifier.address.toLowerCase() === at) hashes.verifier = codeHash;
    hashes.adapters = manifest.routes.map((r, i) => (r.action === "external" && r.adapter.address.toLowerCase() === at ? codeHash : (hashes.adapters[i] ?? null)));
    setCodeHashes(hashes);
  };

  /**
   * The Pool's storage slots that pin an adapter's code hash (Pool.routes[id].codeHash, one per route it
   * serves): the Pool refuses an adapter whose code is not the one it approved, so a patched adapter's
   * pin follows its code, as if the owner approved it again. Found from the Pool's storage layout.
   */
  const pinSlots = async (adapter: Address): Promise<Hex[]> => {
    const ids = manifest.routes.flatMap((r) => (r.action === "external" && r.adapter.address.toLowerCase() === adapter.toLowerCase() ? [r.id as Hex] : []));
    if (ids.length === 0) return [];
    const pool = manifest.poolAddress as Address;
    const layout = records.get(pool.toLowerCase())?.originalLayout ?? identifyCode(((await client.getCode({ address: pool })) ?? "0x") as Hex, known);
    const routes = layout?.storage.find((v) => v.label === "routes");
    const member = routes ? /bytes32 codeHash @(\d+)\+0/.exec(routes.type) : null;
    if (!routes || !member) throw new PatchError("patch_base_unknown", `${adapter} is an action route's adapter, whose code hash the Pool pins (Pool.routes); the Pool's storage layout is unknown here, so the pin cannot follow its code`);
    return ids.map((id) => numberToHex(hexToBigInt(keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "uint256" }], [id, BigInt(routes.slot)]))) + BigInt(member[1] as string), { size: 32 }));
  };
  const pin = async (slots: readonly Hex[], code: Hex) => {
    for (const slot of slots) await jsonRpc(rpcUrl, "anvil_setStorageAt", [manifest.poolAddress, slot, keccak256(code)]);
  };

  const save = async () => {
    if (records.size === 0) await rm(file, { force: true });
    else await writeFileAtomic(file, `${JSON.stringify([...records.values()], null, 2)}\n`);
  };

  /** The code at an address goes to `code`; the manifest, the runtime and the records follow, or the code goes back. */
  const install = async (address: Address, before: Hex, code: Hex, record: PatchRecord | null): Promise<void> => {
    const at = address.toLowerCase();
    const previous = records.get(at);
    const hashes = codeHashes();
    const pins = await pinSlots(address);
    await jsonRpc(rpcUrl, "anvil_setCode", [address, code]);
    try {
      await pin(pins, code);
      rehash(address, keccak256(code));
      if (record) records.set(at, record);
      else records.delete(at);
      const patched = [...records.values()].map(summary);
      await codeChanges(attached?.runtime as FastifyInstance)?.accept(manifestBytes(manifest), patched);
      await writeFileAtomic(manifestPath, manifestBytes(manifest));
      await save();
      intended.set(at, { address, code });
      await attached?.onChange(patched);
    } catch (error) {
      // Left as it was: the code, the manifest (in memory and on disk), the records.
      await jsonRpc(rpcUrl, "anvil_setCode", [address, before]);
      await pin(pins, before);
      setCodeHashes(hashes);
      if (previous) records.set(at, previous);
      else records.delete(at);
      await writeFileAtomic(manifestPath, manifestBytes(manifest));
      await save();
      // The runtime checks the patched chain as at its start (a verifier of another proof system, say): a refusal of the patch.
      if (error instanceof DeploymentMismatchError) throw new PatchError("deployment_mismatch", `the runtime refuses the patched chain: ${error.message}`);
      throw error;
    }
  };

  const locked = <T>(work: () => Promise<T>): Promise<T> => (attached ? attached.lock.run(work) : work());

  const patch = (target: string, source: string) =>
    locked(async (): Promise<PatchResult> => {
      const { name, address } = resolve(target);
      const deployed = ((await client.getCode({ address })) ?? "0x") as Hex;
      if (deployed === "0x") throw new PatchError("unknown_contract", `no contract at ${address}: nothing to patch`);
      // Checked against the deployed contract's own layout and immutables, even when patched before: what a
      // patch appended held data only since, and the deployed code holds the immutables' values.
      const previous = records.get(address.toLowerCase());
      const original = (previous?.originalCode ?? deployed) as Hex;
      const base: ContractLayout | undefined = previous?.originalLayout ?? identifyCode(deployed, known);
      if (!base) throw new PatchError("patch_base_unknown", `the code at ${name} (${address}) is none of the fixtures': its storage layout and immutables are unknown, so a patch cannot be checked`);
      const next = await readPatchSource(source, base.contractName);
      checkStorage(base.storage, next.storage);
      const code = fillImmutables(base, original, next);
      const codeHash = keccak256(code);
      const record: PatchRecord = {
        name,
        address,
        source: `${path.isAbsolute(source) || !existsSync(source) ? source : path.resolve(source)}${source.endsWith(`:${next.contractName}`) ? "" : `:${next.contractName}`}`,
        codeHash,
        code,
        originalCodeHash: keccak256(original),
        originalCode: original,
        originalLayout: base,
        patchedAt: new Date().toISOString(),
        ...(previous?.loaded ? { loaded: previous.loaded } : {}),
      };
      await install(address, deployed, code, record);
      return { ...summary(record), previousCodeHash: keccak256(deployed) };
    });

  const unpatch = (target: string) =>
    locked(async (): Promise<PatchResult> => {
      const { name, address } = resolve(target);
      const record = records.get(address.toLowerCase());
      if (!record) throw new PatchError("unknown_contract", `${name} (${address}) is not patched`);
      // Patched since the stack was loaded patched (even with the same code, as a bisect's step may): back
      // to the bundle's patch, still a patch of the original; from there, to the original.
      const { loaded } = record;
      if (loaded && loaded.patchedAt !== record.patchedAt) {
        await install(address, record.code, loaded.code, { ...record, ...loaded });
        return { name, address, codeHash: loaded.codeHash, source: loaded.source, previousCodeHash: record.codeHash };
      }
      await install(address, record.code, record.originalCode as Hex, null);
      return { name, address, codeHash: record.originalCodeHash, source: "(as deployed)", previousCodeHash: record.codeHash as Hex };
    });

  return {
    patch,
    unpatch,
    patches: () => [...records.values()].map(summary),
    async reapply() {
      for (const { address, code } of intended.values()) {
        await jsonRpc(rpcUrl, "anvil_setCode", [address, code]);
        await pin(await pinSlots(address), code);
      }
    },
    restore(saved, options = {}) {
      for (const saving of saved) {
        // A bundle's records: the code they describe is the one this stack started with (a bundle of a loaded stack's, its own).
        const record = options.loaded ? { ...saving, loaded: { source: saving.source, codeHash: saving.codeHash, code: saving.code, patchedAt: saving.patchedAt } } : saving;
        records.set(record.address.toLowerCase(), record);
        intended.set(record.address.toLowerCase(), { address: record.address as Address, code: record.code as Hex });
      }
    },
    attach(a) {
      attached = a;
    },
  };
}

/**
 * A state dir's patch records (a loaded bundle's, a resumed stack's), checked against the chain: each
 * names the code its contract has. A record the chain contradicts is refused, not believed.
 */
export async function loadPatchRecords(args: { stateDir: string; client: PublicClient }): Promise<PatchRecord[]> {
  const file = path.join(args.stateDir, PATCHES_FILE);
  if (!existsSync(file)) return [];
  const records = PatchRecords.parse(JSON.parse(await readFile(file, "utf8")));
  for (const record of records) {
    const code = (await args.client.getCode({ address: record.address as Address })) ?? "0x";
    const loaded = record.loaded === undefined || keccak256(record.loaded.code as Hex) === record.loaded.codeHash;
    if (keccak256(code) !== record.codeHash || keccak256(record.code as Hex) !== record.codeHash || keccak256(record.originalCode as Hex) !== record.originalCodeHash || !loaded) {
      throw new Error(`${file}: patch record of ${record.name} (${record.address}) does not describe the chain's code`);
    }
  }
  return records;
}
