import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { leftBehind, RUN_TMPDIR_PREFIX, stacksStopped, sweepDeadRuns } from "./support/run-tmpdir.ts";
import { alive, gone } from "./support/processes.ts";
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

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`goes when the run is interrupted by ${signal}, with what a test left in it (issue 30, item 20)`, async () => {
      const outer = await tempDir("interrupted-run-");
      const ready = path.join(await tempDir("interrupted-ready-"), "worker-pid");
      const run = execa(process.execPath, ["node_modules/vitest/vitest.mjs", "run", "--config", "test/fixtures/interrupted-run/vitest.config.ts"], {
        env: { TMPDIR: outer, READY_FILE: ready },
        reject: false,
      });
      let worker: number | undefined;
      let ended = false;
      void run.then(() => (ended = true));
      try {
        while (worker === undefined) {
          worker = await readFile(ready, "utf8").then(Number, () => undefined);
          if (ended) throw new Error(`the run ended before its test started:\n${String((await run).stderr)}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const [folder] = await readdir(outer);
        expect(folder).toMatch(new RegExp(`^${RUN_TMPDIR_PREFIX}${run.pid}-`));
        expect(await readdir(path.join(outer, folder as string))).toHaveLength(1); // the test's folder, as a stack's state dir
        run.kill(signal);
        await run;
        expect(await readdir(outer)).toEqual([]);
        expect(await gone(worker)).toBe(true);
      } finally {
        run.kill("SIGKILL");
        await run;
        if (worker !== undefined && alive(worker)) process.kill(worker, "SIGKILL");
      }
    });
  }

  it("of a killed run (SIGKILL: no exit of its own) is removed by the next run; a live run's is kept", async () => {
    const dir = await tempDir("fake-tmp-");
    const ended = execa(process.execPath, ["-e", ""]);
    await ended;
    const dead = `${RUN_TMPDIR_PREFIX}${ended.pid}-abc123`;
    const live = `${RUN_TMPDIR_PREFIX}${process.pid}-def456`;
    for (const entry of [dead, live, "queue-devstack-test-run-ghi789"]) await mkdir(path.join(dir, entry, "queue-devstack-x"), { recursive: true });
    expect(await sweepDeadRuns(dir)).toEqual([dead]);
    expect((await readdir(dir)).sort()).toEqual([live, "queue-devstack-test-run-ghi789"].sort());
  });
});
