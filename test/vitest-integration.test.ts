import { execa } from "execa";
import { describe, expect, it } from "vitest";

describe("queue-devstack/vitest", () => {
  it("a failing test's report carries the stack's side: operations, anvil's and the runtime's last lines", async () => {
    const run = await execa(process.execPath, ["node_modules/vitest/vitest.mjs", "run", "--config", "test/fixtures/vitest-failing/vitest.config.ts"], {
      reject: false,
      env: { CI: "1" },
      all: true,
    });
    expect(run.exitCode).toBe(1);
    const report = String(run.all);
    expect(report).toContain("fails after a refused relay");
    expect(report).toContain("queue-devstack: operations this test relayed:\n  none");
    expect(report).toMatch(/anvil's last lines:\n(  .*\n)*  eth_/);
    // The runtime's log names the refused request.
    expect(report).toMatch(/the queue runtime's last lines:\n(  .*\n)*.*"statusCode":400/);
  });
});
