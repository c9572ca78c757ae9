import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Real anvil processes and real transactions: generous, but bounded.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // One worker per core, not vitest's default of one fewer: a test file spends most of its time waiting
    // on anvil, the relayer and its child processes, so on a 2-core machine one worker left a core idle.
    maxWorkers: "100%",
    // First, the run's own TMPDIR, which must be empty at the end (every test removes what it made);
    // then queue-devstack's own globalSetup (as a user's config names it: "queue-devstack/vitest/global-setup").
    globalSetup: ["test/support/run-tmpdir.ts", "harness/vitest/global-setup/index.ts"],
  },
});
