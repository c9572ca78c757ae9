import { readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// Issue 42, item 6: the stack a test file (or a describe block) shares is started by one helper,
// withQueueStack (test/support/queue-stack.ts), which also stops it and closes the provers. A hook
// that calls startDevStack itself is a copy of that set-up, kept apart from the others.

/** The `beforeAll` hooks of a source text that call startDevStack themselves, each as its line. */
function ownStackSetUps(text: string): number[] {
  const source = ts.createSourceFile("file.ts", text, ts.ScriptTarget.Latest, true);
  const lines: number[] = [];
  const calls = (node: ts.Node, name: string) => ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === name;
  const startsAStack = (node: ts.Node): boolean => calls(node, "startDevStack") || (ts.forEachChild(node, startsAStack) ?? false);
  const visit = (node: ts.Node) => {
    if (calls(node, "beforeAll") && startsAStack(node)) lines.push(source.getLineAndCharacterOfPosition(node.getStart()).line + 1);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return lines;
}

describe("the stack set-up", () => {
  it("is withQueueStack's in every test file: no beforeAll calls startDevStack itself", async () => {
    const files = readdirSync("test").filter((f) => f.endsWith(".test.ts"));
    const found: string[] = [];
    for (const file of files) for (const line of ownStackSetUps(await readFile(path.join("test", file), "utf8"))) found.push(`test/${file}:${line}`);
    expect(found).toEqual([]);
  });

  it("is told apart from the helper: a hook starting its own stack is found, at any depth, and the helper's call is not", () => {
    expect(ownStackSetUps('beforeAll(async () => {\n  stack = await startDevStack({ store: ":memory:" });\n});')).toEqual([1]);
    expect(ownStackSetUps('describe("a block", () => {\n  beforeAll(async () => {\n    if (x) [a] = await Promise.all([startDevStack()]);\n  });\n});')).toEqual([2]);
    expect(ownStackSetUps('withQueueStack({ client: false }, (s) => ({ stack } = s));\nbeforeAll(() => proxy.listen(0));\nit("starts one", () => startDevStack());')).toEqual([]);
  });
});
