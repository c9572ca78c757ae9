import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Real anvil processes and real transactions: generous, but bounded.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // queue-devstack's own globalSetup (as a user's config names it: "queue-devstack/vitest/global-setup").
    globalSetup: ["harness/vitest/global-setup/index.ts"],
  },
});
