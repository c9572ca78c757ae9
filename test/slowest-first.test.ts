import path from "node:path";
import { describe, expect, it } from "vitest";
import type { TestSpecification, Vitest } from "vitest/node";
import { KNOWN_SECONDS, SlowestFirst } from "./support/slowest-first.ts";

// The suite's file order (vitest.config.ts's sequencer): the longest first, across both projects.
const root = path.resolve(import.meta.dirname, "..");
const spec = (file: string, project = "dev-proofs") => ({ moduleId: path.join(root, file), project: { name: project } }) as unknown as TestSpecification;
const sequencer = (cachedMs: Record<string, number>) =>
  new SlowestFirst({
    config: { root },
    cache: { getTestSpecificationResult: (s: TestSpecification) => (path.relative(root, s.moduleId) in cachedMs ? { duration: cachedMs[path.relative(root, s.moduleId)], failed: false } : undefined) },
  } as unknown as Vitest);
const order = (files: TestSpecification[]) => files.map((s) => `${s.project.name} ${path.relative(root, s.moduleId)}`);

describe("SlowestFirst", () => {
  it("on a clean clone (no timings): the known slow files longest first, then the real-proofs lane, then the rest, larger first", async () => {
    const files = [spec("test/printable.test.ts"), spec("test/circuit.test.ts", "real-proofs"), spec("test/exec.test.ts"), spec("test/dev-stack-cli.test.ts"), spec("test/docs.test.ts")];
    expect(KNOWN_SECONDS["test/dev-stack-cli.test.ts"]).toBeGreaterThan(KNOWN_SECONDS["test/exec.test.ts"] as number);
    expect(order(await sequencer({}).sort(files))).toEqual([
      "dev-proofs test/dev-stack-cli.test.ts",
      "dev-proofs test/exec.test.ts",
      "real-proofs test/circuit.test.ts",
      // docs.test.ts is the larger file of the two
      "dev-proofs test/docs.test.ts",
      "dev-proofs test/printable.test.ts",
    ]);
  });

  it("a file's last run (vitest's cache) outranks the table", async () => {
    const files = [spec("test/exec.test.ts"), spec("test/printable.test.ts"), spec("test/circuit.test.ts", "real-proofs")];
    expect(order(await sequencer({ "test/printable.test.ts": 90_000, "test/exec.test.ts": 1_000 }).sort(files))).toEqual(["dev-proofs test/printable.test.ts", "real-proofs test/circuit.test.ts", "dev-proofs test/exec.test.ts"]);
  });
});
