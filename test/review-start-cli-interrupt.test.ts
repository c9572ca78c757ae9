import { readdir } from "node:fs/promises";
import { execa } from "execa";
import { beforeAll, describe, expect, it } from "vitest";
import { interruptPreload } from "./support/interrupt-at.ts";
import { anvilsWith } from "./support/processes.ts";
import { withTempDirs } from "./support/temp-dirs.ts";
import { builtCli } from "./support/cli.ts";

// The CLI's genesis start builds its runtime while anvil boots (issue 32, item 1): a SIGINT or SIGTERM
// as any step ends (raised by the CLI itself as it prints that step's line, so at that point on any
// machine) stops what started, leaves the state dir as it was found, and exits 0 as an interrupt does.
const tempDir = withTempDirs();
const CLI = builtCli();
let interruptAt: string;
beforeAll(async () => {
  interruptAt = await interruptPreload(await tempDir("review-start-preload-"));
});

describe("queue-devstack interrupted during its start (the committed genesis)", () => {
  for (const [step, signal] of [
    ["load contracts", "SIGINT"],
    ["start anvil", "SIGINT"],
    ["write manifest", "SIGTERM"],
    ["start queue runtime", "SIGINT"],
  ] as const) {
    it(`${signal} as "${step}" ends: exit 0, no anvil left, the state dir as found`, async () => {
      const stateDir = await tempDir("review-start-cli-");
      const result = await execa(process.execPath, ["--import", interruptAt, ...CLI, "--chain-port", "0", "--queue-port", "0", "--state-dir", stateDir, "--json"], {
        reject: false,
        env: { INTERRUPT_AT_STEP: step, INTERRUPT_SIGNAL: signal },
      });
      expect(result.stderr).toContain(`${signal}: stopping the stack...`);
      expect([result.exitCode, result.stdout]).toEqual([0, ""]);
      expect(await anvilsWith(stateDir)).toEqual([]);
      expect(await readdir(stateDir)).toEqual([]);
    });
  }
});
