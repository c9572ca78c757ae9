import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Real anvil processes and real transactions: generous, but bounded.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // First, the run's own TMPDIR, which must be empty at the end (every test removes what it made), and
    // default ports refused in every process of the run (tests use free ports); then queue-devstack's own
    // globalSetup (as a user's config names it: "queue-devstack/vitest/global-setup").
    globalSetup: ["test/support/run-tmpdir.ts", "test/support/default-ports.ts", "harness/vitest/global-setup/index.ts"],
  },
});
