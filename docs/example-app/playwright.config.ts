import { defineConfig } from "@playwright/test";
import { SEED_CONFIRMATIONS } from "queue-devstack";
import type { StackTestFixtures, StackWorkerFixtures } from "queue-devstack/playwright";

export default defineConfig<StackTestFixtures, StackWorkerFixtures>({
  testDir: "tests",
  testMatch: "**/*.e2e.ts",
  workers: 2, // a stack each, on ports from the OS
  fullyParallel: true,
  use: {
    // Dev proofs: the deployment reviewed.json pins (server.mjs). Two confirmations: the seeded scenario's.
    devStackOptions: { proofs: "dev", relay: { requiredConfirmations: SEED_CONFIRMATIONS } },
    headless: true,
    launchOptions: { executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ["--no-sandbox"] },
  },
  // The app's own server, on a port from the OS: the URL it prints is EXAMPLE_APP_URL in the tests.
  webServer: { command: "node server.mjs", wait: { stdout: /example app at (?<example_app_url>\S+)/ } },
});
