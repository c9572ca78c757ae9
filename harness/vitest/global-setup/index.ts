import "../../../src/node-version-guard.ts"; // first: one line on an older Node, before anything needing 22 runs
import { access, constants } from "node:fs/promises";
import { anvilBinaryPath } from "../../chain/index.ts";
import { loadCircuitManifest } from "../../deployment/index.ts";
import { loadFixtures } from "../../deployment/index.ts";
import { sweepAbandonedTempStacks } from "../../state-dir/index.ts";

/**
 * vitest globalSetup (`globalSetup: ["queue-devstack/vitest/global-setup"]`): what every worker's stack
 * needs, done once before any worker starts. It stops and removes stacks a killed run left (their
 * owner died: recorded PIDs and command lines, never process names), checks the anvil binary, and
 * loads the contracts and proof files once (in this repository, stale contracts are compiled here, not
 * by several workers at once). Each worker then starts its own stack on first use.
 */
export async function setup(): Promise<void> {
  const swept = await sweepAbandonedTempStacks();
  if (swept.length > 0) console.log(`queue-devstack: removed ${swept.length} stack(s) a killed run left`);
  const binary = anvilBinaryPath();
  await access(binary, constants.X_OK).catch(() => {
    throw new Error(`queue-devstack: the anvil binary ${binary} is missing or not executable: run npm install`);
  });
  await Promise.all([loadFixtures((reason) => console.log(`queue-devstack: contracts ${reason}: compiling once for all workers`)), loadCircuitManifest()]);
}
