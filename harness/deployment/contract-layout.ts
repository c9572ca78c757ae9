import type { Hex } from "viem";

/**
 * What a patch must keep of a deployed contract, read from solc's standard-JSON output: its runtime
 * code, its immutables by name (where their bytes sit in that code) and its storage variables. Types
 * are written out structurally, without AST ids or contract names, so two compilations of the same
 * layout compare equal (`struct Pool.Route` and `struct PoolFeeOffByOne.Route` are one type).
 */
export interface ContractLayout {
  contractName: string;
  sourceName: string;
  /** The runtime code, every immutable's bytes zero (as solc leaves them). */
  deployedBytecode: Hex;
  /** Each immutable by name: its type and where its value goes in the runtime code. */
  immutables: Record<string, { type: string; refs: Array<{ start: number; length: number }> }>;
  /** The storage variables in slot order. */
  storage: StorageVariable[];
}

export interface StorageVariable {
  label: string;
  slot: string;
  offset: number;
  type: string;
}

interface SolcType {
  encoding: string;
  label: string;
  numberOfBytes: string;
  key?: string;
  value?: string;
  base?: string;
  members?: Array<{ label: string; slot: string; offset: number; type: string }>;
}

/** The parts of solc's output read here (standard JSON, Hardhat's build-info output alike). */
export interface SolcOutput {
  contracts?: Record<string, Record<string, {
    evm?: { deployedBytecode?: { object?: string; immutableReferences?: Record<string, Array<{ start: number; length: number }>> } };
    storageLayout?: { storage: Array<{ label: string; slot: string; offset: number; type: string }>; types: Record<string, SolcType> | null };
  }>>;
  sources?: Record<string, { ast?: unknown }>;
}

/** A type's shape: what decides where its bytes go in storage, not what it is called. */
export function storageType(types: Record<string, SolcType> | null, id: string): string {
  const t = types?.[id];
  if (!t) return id;
  if (t.encoding === "mapping") return `mapping(${storageType(types, t.key ?? "")} => ${storageType(types, t.value ?? "")})`;
  if (t.members) return `struct { ${t.members.map((m) => `${storageType(types, m.type)} ${m.label} @${m.slot}+${m.offset}`).join("; ")} }`;
  if (t.base) return `${storageType(types, t.base)}[${t.encoding === "dynamic_array" ? "" : t.numberOfBytes}]`;
  // A contract is stored as its address, an enum as the smallest uint that holds it.
  if (t.label.startsWith("contract ")) return "address";
  if (t.label.startsWith("enum ")) return `uint${Number(t.numberOfBytes) * 8}`;
  return t.label;
}

/** Every immutable declared in the ASTs, by its AST id: name and type. */
function immutableDeclarations(sources: SolcOutput["sources"]): Map<number, { name: string; type: string }> {
  const found = new Map<number, { name: string; type: string }>();
  const visit = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== "object") return;
    const n = node as Record<string, unknown>;
    if (n.nodeType === "VariableDeclaration" && n.mutability === "immutable" && typeof n.id === "number") {
      found.set(n.id, { name: String(n.name), type: String((n.typeDescriptions as { typeString?: string } | undefined)?.typeString ?? "") });
    }
    for (const value of Object.values(n)) if (value !== null && typeof value === "object") visit(value);
  };
  for (const source of Object.values(sources ?? {})) visit(source.ast);
  return found;
}

/**
 * One contract of a compiler output, as a ContractLayout; a string saying what is missing when the
 * output lacks something a patch must check (the storage layout, the ASTs naming the immutables).
 */
export function contractLayout(output: SolcOutput, sourceName: string, contractName: string): ContractLayout | string {
  const contract = output.contracts?.[sourceName]?.[contractName];
  if (!contract) return `no contract ${contractName} in ${sourceName}`;
  const code = contract.evm?.deployedBytecode?.object;
  if (!code) return `${contractName} has no runtime code in the compiler output (an interface or abstract contract?)`;
  if (!contract.storageLayout) return `${contractName} has no storageLayout in the compiler output: compile with outputSelection "storageLayout"`;
  const refs = contract.evm?.deployedBytecode?.immutableReferences ?? {};
  const declared = immutableDeclarations(output.sources);
  const immutables: ContractLayout["immutables"] = {};
  for (const [id, where] of Object.entries(refs)) {
    const declaration = declared.get(Number(id));
    if (!declaration) return `${contractName}'s immutables are not named in the compiler output: compile with the ASTs (outputSelection "ast")`;
    immutables[declaration.name] = { type: declaration.type, refs: where };
  }
  const types = contract.storageLayout.types;
  return {
    contractName,
    sourceName,
    deployedBytecode: (code.startsWith("0x") ? code : `0x${code}`) as Hex,
    immutables,
    storage: contract.storageLayout.storage.map((v) => ({ label: v.label, slot: v.slot, offset: v.offset, type: storageType(types, v.type) })),
  };
}
