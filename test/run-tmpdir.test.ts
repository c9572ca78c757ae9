import { mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { leftBehind, RUN_TMPDIR_PREFIX, stacksStopped } from "./support/run-tmpdir.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

// The suite's own hygiene check (test/support/run-tmpdir.ts, a globalSetup): each run writes its temp
// folders in a TMPDIR of its own, which must be empty when the run ends.
const tempDir = withTempDirs();

describe("the run's TMPDIR", () => {
  it("is the run's own folder, in every worker", () => {
    expect(path.basename(tmpdir())).toMatch(new RegExp(`^${RUN_TMPDIR_PREFIX}`));
    expect(process.env.TMPDIR).toBe(tmpdir());
  });

  it("holds the run's XDG cache, so a fork's default RPC cache never lands in the user's ~/.cache", async () => {
    const { DEFAULT_FORK_CACHE_DIR } = await import("../harness/chain/index.ts");
    expect(process.env.XDG_CACHE_HOME).toBe(path.join(tmpdir(), "xdg-cache"));
    expect(DEFAULT_FORK_CACHE_DIR.startsWith(tmpdir() + path.sep)).toBe(true);
  });

  it("counts everything left in it but Node's compile cache and the run's XDG cache", async () => {
    const dir = await tempDir("fake-run-");
    expect(await leftBehind(dir)).toEqual([]);
    for (const entry of ["queue-devstack-abc123", "bench-stack-x", "node-compile-cache", "xdg-cache"]) await mkdir(path.join(dir, entry));
    expect(await leftBehind(dir)).toEqual(["bench-stack-x", "queue-devstack-abc123"]);
  });

  it("waits for a stack that is removing itself (its process record gone first, then its folder), and no longer for one that stays", async () => {
    const dir = await tempDir("fake-run-");
    const stopping = path.join(dir, "queue-devstack-stopping");
    await mkdir(stopping);
    await writeFile(path.join(stopping, "queue.sqlite"), "");
    const removed = new Promise((resolve) => setTimeout(resolve, 300)).then(() => rm(stopping, { recursive: true }));
    await stacksStopped(dir);
    expect(await leftBehind(dir)).toEqual([]);
    await removed;
    // A folder that never goes is waited for a moment, then is the leftover it is.
    await mkdir(path.join(dir, "queue-devstack-leaked"));
    await stacksStopped(dir, 200);
    expect(await leftBehind(dir)).toEqual(["queue-devstack-leaked"]);
  });
});
