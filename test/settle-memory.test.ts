import path from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { describe, expect, it } from "vitest";

const SETTLE = pathToFileURL(path.resolve("harness/process/index.ts")).href;

/** A fresh Node process whose start grows V8's new space, then (settle) asks for it back: its new space before and after, in MB. */
async function newSpaceOf(settle: boolean): Promise<{ grown: number; after: number }> {
  const script = `
    import { getHeapSpaceStatistics } from "node:v8";
    import { settleMemoryAfterStart } from ${JSON.stringify(SETTLE)};
    const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === "new_space").physical_space_size / 1048576;
    // Objects that live a while, as a start's do: V8 grows the new space.
    let keep = [];
    for (let i = 0; i < 2_000_000; i++) { keep.push({ i, s: String(i) }); if (keep.length > 200_000) keep = []; }
    keep = [];
    const grown = newSpace();
    if (${settle}) settleMemoryAfterStart(0);
    setTimeout(() => console.log(JSON.stringify({ grown, after: newSpace() })), 50);
  `;
  const { stdout } = await execa(process.execPath, ["--experimental-strip-types", "--no-warnings", "--input-type=module", "-e", script]);
  return JSON.parse(stdout) as { grown: number; after: number };
}

// The CLI calls it once started (scripts/cli/dev-stack.ts): an idle stack's node kept the 16-32 MB new space
// its start grew (issue 32, item 5).
describe("settleMemoryAfterStart", () => {
  it("gives back the new space a start grew, where a process left alone keeps it", async () => {
    const [alone, settled] = await Promise.all([newSpaceOf(false), newSpaceOf(true)]);
    expect(alone.grown).toBeGreaterThan(8);
    expect(alone.after).toBeGreaterThan(8);
    expect(settled.grown).toBeGreaterThan(8);
    expect(settled.after).toBeLessThan(2);
  });
});
