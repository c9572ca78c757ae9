import { readdirSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";

// The layout as a rule, read from the sources (TypeScript's own scanner: static, type-only, re-export
// and dynamic imports alike): no import cycle; the floors scripts -> harness -> src, nothing upward; a
// harness folder is entered only through its index.ts; the folders of src/ call one way; and no file of
// src/ or harness/ is over 400 lines.
const ROOTS = ["src", "harness", "scripts", "test"];

type Graph = Map<string, string[]>;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
    .map((f) => path.join(dir, f));
}

/** Each file and the repository files it imports (relative specifiers; packages are not followed). */
async function importGraph(roots: readonly string[] = ROOTS): Promise<Graph> {
  const graph: Graph = new Map();
  for (const file of roots.flatMap(tsFiles)) {
    const { importedFiles } = ts.preProcessFile(await readFile(file, "utf8"), true, true);
    graph.set(
      file,
      importedFiles.map((i) => i.fileName).filter((s) => s.startsWith(".")).map((s) => path.normalize(path.join(path.dirname(file), s))).filter((t) => t.endsWith(".ts")),
    );
  }
  return graph;
}

/** The cycles, one per strongly connected group of files, each as a path that returns to its start. */
function cycles(graph: Graph): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "open") found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return found;
}

const layer = (file: string) => file.split(path.sep)[0] as string;
/** What each floor may import besides itself: scripts -> harness -> src; tests import any of them (and benchmark scripts reuse test/support). */
const MAY_IMPORT: Record<string, string[]> = { src: [], harness: ["src"], scripts: ["harness", "src", "test"], test: ["harness", "src", "scripts"] };

/** Imports across floors that go the wrong way (src importing harness, harness importing scripts...). */
function upwardImports(graph: Graph): string[] {
  return [...graph].flatMap(([file, targets]) =>
    targets.filter((t) => layer(t) !== layer(file) && !(MAY_IMPORT[layer(file)] ?? []).includes(layer(t))).map((t) => `${file} -> ${t}`),
  );
}

/**
 * The back doors kept on purpose, each with its reason. The vitest integration and the Hardhat plugin
 * take the queue client alone: a connection needs it, not the rest of the client's door (the note,
 * key and tree code, about 110 ms more to import in every test worker).
 */
const KNOWN_BACK_DOORS = ["harness/vitest/index.ts -> harness/client/queue-client.ts", "harness/hardhat/devstack.ts -> harness/client/queue-client.ts"];

/** Imports of a harness folder's inner file from outside that folder: only its index.ts is a door. */
function backDoorImports(graph: Graph): string[] {
  return [...graph].flatMap(([file, targets]) =>
    targets
      .filter((t) => layer(t) === "harness" && path.basename(t) !== "index.ts" && !`${path.dirname(file)}${path.sep}`.startsWith(`${path.dirname(t)}${path.sep}`))
      .map((t) => `${file} -> ${t}`),
  );
}

/**
 * Import cycles between the folders of src/ (a pair that imports each other is one): calls run one way,
 * route -> relayer -> admission -> chain -> store. src/'s own loose files are left out: they are the
 * runtime's entry (server.ts, main.ts) and the leaves every folder shares (problem.ts, paths.ts...).
 */
function folderCycles(graph: Graph): string[][] {
  const folders: Graph = new Map();
  for (const [file, targets] of graph) {
    const from = path.dirname(file);
    if (layer(file) !== "src" || from === "src") continue;
    const to = targets.map((t) => path.dirname(t)).filter((t) => layer(t) === "src" && t !== "src" && t !== from);
    folders.set(from, [...new Set([...(folders.get(from) ?? []), ...to])]);
  }
  return cycles(folders);
}

/** The most lines a source file of src/ or harness/ may have: past it, it holds more than one thing. */
const MAX_LINES = 400;

function longFiles(files: ReadonlyMap<string, string>): string[] {
  return [...files].filter(([file, text]) => ["src", "harness"].includes(layer(file)) && text.split("\n").length - (text.endsWith("\n") ? 1 : 0) > MAX_LINES).map(([file]) => file);
}

describe("the import graph", () => {
  let graph: Graph;
  beforeAll(async () => {
    graph = await importGraph();
  });

  it("is read from every source file", () => {
    expect(graph.size).toBeGreaterThan(150);
    // Type-only imports and re-exports count: a cycle through types alone is still a cycle.
    expect(graph.get(path.join("src", "admission", "request-checks.ts"))).toContain(path.join("src", "store", "types.ts"));
    expect(graph.get(path.join("harness", "index.ts"))).toContain(path.join("harness", "stack.ts"));
  });

  it("has no import cycle", () => {
    expect(cycles(graph).map((cycle) => cycle.join(" -> "))).toEqual([]);
  });

  it("imports only downward: scripts -> harness -> src, never back", () => {
    expect(upwardImports(graph)).toEqual([]);
  });

  it("enters each harness folder through its index.ts alone, and every harness folder has one", () => {
    const found = backDoorImports(graph);
    expect(found.filter((i) => !KNOWN_BACK_DOORS.includes(i))).toEqual([]);
    expect(KNOWN_BACK_DOORS.filter((i) => !found.includes(i)), "a known back door no longer used: remove it from the list").toEqual([]);
    const folders = readdirSync("harness", { recursive: true, encoding: "utf8" }).filter((f) => statSync(path.join("harness", f)).isDirectory());
    expect(folders.length).toBeGreaterThan(5);
    expect(folders.filter((f) => !graph.has(path.join("harness", f, "index.ts")))).toEqual([]);
  });

  it("has no two folders of src/ importing each other, nor any cycle of them", () => {
    expect(folderCycles(graph).map((cycle) => cycle.join(" -> "))).toEqual([]);
  });

  it(`has no file in src/ or harness/ over ${MAX_LINES} lines`, async () => {
    const files = new Map<string, string>();
    for (const file of ["src", "harness"].flatMap(tsFiles)) files.set(file, await readFile(file, "utf8"));
    expect(files.size).toBeGreaterThan(100);
    expect(longFiles(files)).toEqual([]);
  });

  it("finds what it looks for", () => {
    // The rules themselves, on a made-up graph: a cycle, an upward import and a back door are each found.
    const made: Graph = new Map([
      ["src/a.ts", ["src/b.ts", "harness/index.ts"]],
      ["src/b.ts", ["src/a.ts"]],
      ["harness/index.ts", ["harness/chain/chain.ts", "scripts/x.ts"]],
      ["harness/chain/chain.ts", ["harness/chain/fork.ts", "harness/part/index.ts"]],
      ["test/x.test.ts", ["harness/chain/fork.ts", "harness/chain/index.ts"]],
    ]);
    expect(cycles(made)).toEqual([["src/a.ts", "src/b.ts", "src/a.ts"]]);
    expect(upwardImports(made)).toEqual(["src/a.ts -> harness/index.ts", "harness/index.ts -> scripts/x.ts"]);
    expect(backDoorImports(made)).toEqual(["harness/index.ts -> harness/chain/chain.ts", "test/x.test.ts -> harness/chain/fork.ts"]);
    // Folders of src/ that import each other (a pair, here through two files each way), and a file over the limit.
    const folders: Graph = new Map([
      ["src/relay/relayer.ts", ["src/admission/decide.ts", "src/problem.ts"]],
      ["src/admission/decide.ts", ["src/store/types.ts"]],
      ["src/admission/refusals.ts", ["src/relay/relayer.ts"]],
      ["src/problem.ts", []],
      ["src/server.ts", ["src/relay/relayer.ts"]],
    ]);
    expect(folderCycles(folders)).toEqual([["src/admission", "src/relay", "src/admission"]]);
    const lines = (n: number) => "x\n".repeat(n);
    expect(longFiles(new Map([["src/a.ts", lines(MAX_LINES)], ["harness/b.ts", lines(MAX_LINES + 1)], ["test/c.test.ts", lines(900)]]))).toEqual(["harness/b.ts"]);
  });
});
