import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import * as harness from "../harness/index.ts";
import * as client from "../harness/client/index.ts";
import * as runtime from "../src/server.ts";
import { QueueDevstackError } from "../src/errors/index.ts";
import { PROBLEMS, type ProblemTable } from "../src/problem.ts";
import { DEV_PROBLEMS } from "../harness/dev/problems/index.ts";
import { anchors, prose } from "./support/markdown.ts";

// One error base (issue 42, item 4): every error class a caller can catch extends QueueDevstackError
// with a stable code, callers match on that code and never on `name`, and docs/error-codes.md has one row
// per code, the library's and the problems', each with its docs page.
const repo = path.resolve(import.meta.dirname, "..");
const ENTRIES = { "queue-devstack": harness, "queue-devstack/client": client, "queue-devstack/runtime": runtime };

/** One instance of each exported error class: a new class needs its line here (and its row in the docs). */
const EXAMPLES: Record<string, () => Error> = {
  PersistedStateError: () => new harness.PersistedStateError("x"),
  ChainStartError: () => new harness.ChainStartError("x"),
  AnvilExitedError: () => new harness.AnvilExitedError({ pid: 1, exitCode: 1, signal: null, lastLines: [], during: "x" }),
  PortInUseError: () => new harness.PortInUseError("127.0.0.1", 1, "chain"),
  AllowedHostError: () => new harness.AllowedHostError("x"),
  ForkUpstreamError: () => new harness.ForkUpstreamError("x"),
  PinError: () => new harness.PinError("x"),
  SnapshotError: () => new harness.SnapshotError("x"),
  BundleError: () => new harness.BundleError({ reason: "x" }),
  StackAlreadyRunningError: () => new harness.StackAlreadyRunningError("x"),
  PatchError: () => new harness.PatchError("unknown_contract", "x"),
  SeedError: () => new harness.SeedError("demo", "x"),
  ArtifactIntegrityError: () => new client.ArtifactIntegrityError("x"),
  ProofVerificationError: () => new client.ProofVerificationError("x"),
  ProofSystemMismatchError: () => new client.ProofSystemMismatchError("dev", "groth16", "x"),
  WitnessConstraintError: () => new client.WitnessConstraintError("T", 1),
  TransactionShapeError: () => new client.TransactionShapeError("x"),
  InvalidRecipientError: () => new client.InvalidRecipientError("x"),
  FeeTooHighError: () => new client.FeeTooHighError("x"),
  ForeignOriginError: () => new client.ForeignOriginError("x"),
  ConfigMismatchError: () => new client.ConfigMismatchError(["x"]),
  ReviewedDeploymentError: () => new client.ReviewedDeploymentError("x"),
  QueueProblemError: () => new client.QueueProblemError(422, { code: "fee_too_low", detail: "x" }),
  PendingOperationError: () => new client.PendingOperationError("x"),
  QuoteVerificationError: () => new client.QuoteVerificationError("x"),
  CorsOriginError: () => new runtime.CorsOriginError("x"),
  TrustProxyError: () => new runtime.TrustProxyError(1, "x"),
  ManifestInvalidError: () => new runtime.ManifestInvalidError("x"),
  DeploymentMismatchError: () => new runtime.DeploymentMismatchError("x"),
  StoreInUseError: () => new runtime.StoreInUseError("x"),
  StoreMismatchError: () => new runtime.StoreMismatchError("x"),
  StoreWriteError: () => new runtime.StoreWriteError("x"),
  ArtifactMismatchError: () => new runtime.ArtifactMismatchError("x"),
};

type ErrorClass = abstract new (...args: never[]) => Error;
const isErrorClass = (value: unknown): value is ErrorClass => typeof value === "function" && (value === Error || value.prototype instanceof Error);

/** Every error class the package's entries export (the base aside), by name. */
function exportedErrorClasses(): Map<string, ErrorClass> {
  const found = new Map<string, ErrorClass>();
  for (const entry of Object.values(ENTRIES)) for (const [name, value] of Object.entries(entry)) if (isErrorClass(value) && value !== QueueDevstackError) found.set(name, value);
  return found;
}

/** The rows of the first table under `heading` on a docs page: its cells, backticks kept. */
function tableUnder(page: string, heading: string): string[][] {
  const lines = prose(readFileSync(path.join(repo, page), "utf8")).map((l) => l.text);
  const from = lines.indexOf(heading);
  expect(from, `${page} has ${heading}`).toBeGreaterThan(-1);
  const start = lines.findIndex((line, i) => i > from && line.startsWith("| "));
  const rows: string[][] = [];
  for (let i = start + 2; lines[i]?.startsWith("| "); i++) rows.push((lines[i] as string).slice(2, -2).split(" | "));
  return rows;
}

/** A docs path (from the package's root, `docs/page.md#anchor`) that names no page or no heading of it. */
function brokenDocsPath(docsPath: string): string | null {
  const [file = "", anchor] = docsPath.split("#");
  if (!existsSync(path.join(repo, file))) return `${docsPath}: no such page`;
  return anchor === undefined || anchors(readFileSync(path.join(repo, file), "utf8")).has(anchor) ? null : `${docsPath}: no such heading`;
}

describe("the library's errors", () => {
  it("every exported error class extends QueueDevstackError, with a code, a name and a docs page", () => {
    const exported = exportedErrorClasses();
    expect([...exported.keys()].sort()).toEqual(Object.keys(EXAMPLES).sort());
    for (const entry of Object.values(ENTRIES)) expect(entry.QueueDevstackError).toBe(QueueDevstackError);
    for (const [name, Class] of exported) {
      expect(Class.prototype, name).toBeInstanceOf(QueueDevstackError);
      const error = (EXAMPLES[name] as () => QueueDevstackError)();
      expect(error, name).toBeInstanceOf(Class);
      expect(error.code, name).toMatch(/^[A-Za-z_]+$/);
      expect(error.name, name).toBe(name);
      expect(brokenDocsPath(error.docsPath), name).toBeNull();
    }
  });

  it("each has its row in docs/error-codes.md, with its code", () => {
    const rows = tableUnder("docs/error-codes.md", "## Errors the library throws");
    const documented = new Map(rows.map(([code, name]) => [(name as string).replace(/`/g, ""), code as string]));
    expect([...documented.keys()].sort()).toEqual(Object.keys(EXAMPLES).sort());
    for (const [name, example] of Object.entries(EXAMPLES)) {
      const code = documented.get(name) as string;
      // A code of the class's own, or one per refusal (a problem's, a patch's), which the row says.
      if (code.startsWith("`")) expect(code, name).toBe(`\`${(example() as QueueDevstackError).code}\``);
      else expect(code, name).toMatch(/^the (problem|refusal)'s$/);
    }
  });

  it("carries details as given, or its cause's (a QueueDevstackError cause's own details)", () => {
    expect(new harness.PinError("x", { details: "more" }).details).toBe("more");
    expect(new harness.PinError("x", { cause: new Error("why") })).toMatchObject({ message: "x", details: "why" });
    expect(new harness.BundleError({ reason: "r" }, { cause: new harness.PinError("p", { details: "deep" }) }).details).toBe("deep");
    expect(new harness.PinError("x").details).toBeUndefined();
  });

  it("a BundleError writes its message from its file, part and reason, as each refusal said it before", () => {
    const refusals: Array<[harness.BundleErrorParameters, string]> = [
      [{ reason: "a bundle holds its whole chain" }, "a bundle holds its whole chain"],
      [{ file: "r.qdbundle", reason: "is not a queue-devstack bundle" }, "r.qdbundle is not a queue-devstack bundle"],
      [{ file: "r.qdbundle", part: "store", reason: "it is not gzip" }, "r.qdbundle: its store part is refused: it is not gzip"],
      [{ file: "r.qdbundle", part: "stack", reason: "no Pool" }, "r.qdbundle: its chain and manifest do not make a stack: no Pool"],
    ];
    for (const [parameters, message] of refusals) {
      const error = new harness.BundleError(parameters);
      expect(error.message).toBe(message);
      expect(error).toMatchObject({ code: "bundle_refused", file: parameters.file, part: parameters.part, reason: parameters.reason });
    }
  });

  it("every error class of src/ and harness/ extends the base, but for the test wallet's EIP-1193 errors", () => {
    expect(classesOffTheBase(sources(["src", "harness"]))).toEqual([]);
  });
});

/** Classes kept off the base, each with its reason: a page's wallet error has EIP-1193's numeric `code`. */
const OFF_THE_BASE = new Set(["ProviderError"]);

/** The .ts files under `roots`, with their text. */
function sources(roots: readonly string[]): Map<string, string> {
  return new Map(
    roots.flatMap((root) =>
      readdirSync(path.join(repo, root), { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
        .map((f) => [path.join(root, f), readFileSync(path.join(repo, root, f), "utf8")] as const),
    ),
  );
}

/** Error classes (any class that extends an error class) that do not reach QueueDevstackError, as "file: Class extends Parent". */
function classesOffTheBase(files: ReadonlyMap<string, string>): string[] {
  const parents = new Map<string, { parent: string; file: string }>();
  for (const [file, text] of files) for (const [, name, parent] of text.matchAll(/\bclass (\w+) extends ([\w.]+)/g)) parents.set(name as string, { parent: parent as string, file });
  const reachesBase = (name: string): boolean => name === "QueueDevstackError" || (parents.has(name) && reachesBase((parents.get(name) as { parent: string }).parent));
  const isError = (name: string): boolean => /Error$/.test(name) || (parents.has(name) && isError((parents.get(name) as { parent: string }).parent));
  return [...parents]
    .filter(([name, { parent }]) => name !== "QueueDevstackError" && !OFF_THE_BASE.has(name) && isError(parent) && !reachesBase(parent))
    .map(([name, { parent, file }]) => `${file}: ${name} extends ${parent}`);
}

/** Lines that tell errors apart by `name` (a comparison with an …Error string, a set or switch of names), as "file:line". */
function nameMatches(files: ReadonlyMap<string, string>): string[] {
  const patterns = [/\.name\s*[!=]==?\s*["'`]\w*Error["'`]/, /["'`]\w*Error["'`]\s*[!=]==?\s*[\w.?()]*\.name\b/, /\.(has|includes)\(\s*[\w.?]*\.name\s*\)/, /switch\s*\(\s*[\w.?]*\.name\s*\)/];
  return [...files].flatMap(([file, text]) => text.split("\n").flatMap((line, i) => (patterns.some((p) => p.test(line)) ? [`${file}:${i + 1}`] : [])));
}

describe("callers", () => {
  it("match errors on code, never on name", () => {
    expect(nameMatches(sources(["src", "harness", "scripts"]))).toEqual([]);
  });

  it("finds what it looks for", () => {
    // The rules themselves, on made-up files: each way of matching a name, and each class off the base.
    const made = new Map([
      ["a.ts", 'if (error.name === "ZodError") x();\nif ("BundleError" !== e.name) y();\nFAULTS.has(error.name);\nswitch (error.name) {}\nif (revert?.name === "UnknownRoot") z();'],
      ["b.ts", "class A extends Error {}\nclass B extends A {}\nclass C extends QueueDevstackError {}\nclass D extends C {}\nclass E extends RangeError {}\nclass ProviderError extends Error {}\nclass F extends Base {}"],
    ]);
    expect(nameMatches(made)).toEqual(["a.ts:1", "a.ts:2", "a.ts:3", "a.ts:4"]);
    expect(classesOffTheBase(made)).toEqual(["b.ts: A extends Error", "b.ts: B extends A", "b.ts: E extends RangeError"]);
  });
});

describe("the problem codes", () => {
  it("are one table each, the runtime's and the dev routes', with no code in both", () => {
    expect(Object.keys(PROBLEMS).filter((code) => code in DEV_PROBLEMS)).toEqual([]);
    expect(Object.keys(DEV_PROBLEMS).length).toBeGreaterThan(5);
  });

  it("have one row each in docs/error-codes.md, with the same status, and a docs page that exists", () => {
    const rows = tableUnder("docs/error-codes.md", "## The codes").map(([code, status]) => [(code as string).replace(/`/g, ""), Number(status)] as const);
    const table: ProblemTable = { ...PROBLEMS, ...DEV_PROBLEMS };
    expect(rows.map(([code]) => code).sort()).toEqual(Object.keys(table).sort());
    for (const [code, status] of rows) expect(status, code).toBe(table[code]?.status);
    expect(Object.entries(table).flatMap(([code, row]) => brokenDocsPath(row.docs) ?? []).map(String)).toEqual([]);
  });
});
