import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { fixturesSourcesHash, FIXTURES_DIR } from "../../harness/deployment/index.ts";
import { PATCH_SOLC_SETTINGS } from "../../harness/patch/index.ts";

// The contract variants test/patch.test.ts patches with, compiled once by `npm run build:contracts`
// (scripts/build/build-contracts.ts) into one solc standard-JSON output, committed: a test then patches from
// that file (`<file>:<Contract>`, a supported input) instead of compiling the Pool again (5 to 15 s each
// with the npm solc). Each variant is a text change of a fixture's source, made here, so no copy of the
// Pool is kept. The .sol compile path keeps its own tests (the buggy and the fixed Pool, a compile error).

export const VARIANTS_PATH = path.resolve(import.meta.dirname, "..", "fixtures", "patch-variants.json");
const SELF = path.resolve(import.meta.dirname, "patch-variants.ts");

interface Variant {
  /** The fixture's source it changes, relative to contracts-fixtures/contracts. */
  from: string;
  /** The edit: it must change the source. */
  edit: (source: string) => string;
}

const renamed = (from: string, to: string) => (s: string) => s.replace(`contract ${from} is`, `contract ${to} is`);
const imports = (s: string) => s.replaceAll('from "./', 'from "../');

/** By contract name (each file contracts/test/<name>.sol): what each test patches with. */
export const VARIANTS: Record<string, Variant> = {
  // The bug itself (committed as a file of its own, compiled unchanged): for the artifact and fork tests.
  PoolFeeOffByOne: { from: "test/PoolFeeOffByOne.sol", edit: (s) => s },
  // The Pool itself (the fix), renamed so that an output holding it still names no contract "Pool".
  PoolFixed: { from: "Pool.sol", edit: (s) => renamed("Pool", "PoolFixed")(imports(s)) },
  // A variable added before _assets: _assets moves from slot 5 to 6.
  PoolMovedStorage: { from: "Pool.sol", edit: (s) => renamed("Pool", "PoolMovedStorage")(imports(s)).replace("    address[] private _assets;", "    uint256 private addedBefore;\n    address[] private _assets;") },
  // The owner made a constant: the immutable owner is dropped.
  PoolDroppedImmutable: { from: "Pool.sol", edit: (s) => renamed("Pool", "PoolDroppedImmutable")(imports(s)).replace("address public immutable owner;", "address public constant owner = address(0xdead);").replace("        owner = msg.sender;\n", "") },
  // A variable appended after the last one: allowed.
  PoolAppended: { from: "Pool.sol", edit: (s) => renamed("Pool", "PoolAppended")(imports(s)).replace("    mapping(bytes32 => Reservation) public reservations;\n", "    mapping(bytes32 => Reservation) public reservations;\n    uint256 public patchedCounter;\n") },
  // The swap adapter with one more function: new code, same layout.
  SwapAdapterVersioned: {
    from: "ActionAdapters.sol",
    edit: (s) => renamed("SwapAdapter", "SwapAdapterVersioned")(s).replace("    /// @notice Synchronous: execute returns the output.", "    function patchedVersion() external pure returns (uint256) {\n        return 2;\n    }\n\n    /// @notice Synchronous: execute returns the output."),
  },
};

/** What the committed output was built from: the fixtures' own inputs (sources, config, solc) and this file's edits. */
export async function variantsHash(): Promise<string> {
  return createHash("sha256").update(await fixturesSourcesHash()).update(await readFile(SELF)).digest("hex");
}

type Node = Record<string, unknown>;
/** The immutables' declarations of an AST, all a patch reads of it (their names and types, by id). */
function immutableDeclarations(node: unknown, found: Node[] = []): Node[] {
  if (Array.isArray(node)) node.forEach((n) => immutableDeclarations(n, found));
  else if (node !== null && typeof node === "object") {
    const n = node as Node;
    if (n.nodeType === "VariableDeclaration" && n.mutability === "immutable") found.push({ id: n.id, nodeType: n.nodeType, name: n.name, mutability: n.mutability, typeDescriptions: n.typeDescriptions });
    else for (const value of Object.values(n)) immutableDeclarations(value, found);
  }
  return found;
}

/** Compiles every variant in one solc run (the npm solc, the patch's settings) and writes the output, trimmed to what a patch reads. */
export async function buildPatchVariants(): Promise<{ path: string; contracts: number }> {
  const contracts = path.join(FIXTURES_DIR, "contracts");
  const sources: Record<string, { content: string }> = {};
  for (const [name, { from, edit }] of Object.entries(VARIANTS)) {
    const source = await readFile(path.join(contracts, from), "utf8");
    const edited = edit(source);
    if (from !== `test/${name}.sol` && edited === source) throw new Error(`patch variant ${name}: its edit changed nothing in ${from}`);
    sources[`contracts/test/${name}.sol`] = { content: edited };
  }
  const read = (file: string) => ({ contents: readFileSync(file.startsWith("@") ? path.resolve("node_modules", file) : path.join(FIXTURES_DIR, file), "utf8") });
  const solc = ((await import("solc")) as unknown as { default: { compile(input: string, callbacks: { import: typeof read }): string } }).default;
  const output = JSON.parse(solc.compile(JSON.stringify({ language: "Solidity", sources, settings: PATCH_SOLC_SETTINGS }), { import: read })) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<string, Record<string, unknown>>;
    sources: Record<string, { id: number; ast: unknown }>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) throw new Error(`compiling the patch variants failed:\n${errors.map((e) => e.formattedMessage).join("\n")}`);
  for (const name of Object.keys(VARIANTS)) if (!output.contracts[`contracts/test/${name}.sol`]?.[name]) throw new Error(`patch variant ${name}: not in the compiler's output`);
  const trimmed = {
    sourcesHash: await variantsHash(),
    contracts: output.contracts,
    sources: Object.fromEntries(Object.entries(output.sources).map(([source, { id, ast }]) => [source, { id, ast: { nodeType: "SourceUnit", nodes: immutableDeclarations(ast) } }])),
  };
  const tmp = `${VARIANTS_PATH}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(trimmed)}\n`);
  await rename(tmp, VARIANTS_PATH);
  return { path: VARIANTS_PATH, contracts: Object.values(output.contracts).reduce((n, c) => n + Object.keys(c).length, 0) };
}
