import { chmod, readdir, readlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CIRCUIT_BUILD_DIR } from "../harness/deployment/index.ts";
import { startDevStack } from "../harness/index.ts";
import { childProcesses } from "../harness/process/index.ts";
import { forgetProofHashes } from "../src/proof-artifacts.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

// A genesis stack builds its runtime (operation store, proof files held open) while anvil boots (issue 32,
// item 1). When anvil then fails to start, the start is refused by name and what was built meanwhile is
// closed with the rest: no child, no file of the proof files or the store held open, the state dir as found.
const tempDir = withTempDirs();
const saved = process.env.DEVSTACK_ANVIL_BINARY;
afterEach(() => {
  if (saved === undefined) delete process.env.DEVSTACK_ANVIL_BINARY;
  else process.env.DEVSTACK_ANVIL_BINARY = saved;
});

/** This process's open files under a folder (Linux: /proc/self/fd). */
async function openUnder(dir: string): Promise<string[]> {
  const fds = await readdir("/proc/self/fd").catch(() => []);
  const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => "")));
  return targets.filter((target) => target.startsWith(`${dir}${path.sep}`));
}

describe.runIf(process.platform === "linux")("an anvil that fails to start while the runtime is built ahead", () => {
  for (const [when, delay] of [["at once", 0], ["after the runtime was built", 0.6]] as const) {
    it(`exits ${when}: ChainStartError, nothing left running or open, the state dir as found`, async () => {
      const dir = await tempDir("review-start-anvil-");
      const anvil = path.join(dir, "anvil");
      await writeFile(anvil, `#!/bin/sh\nsleep ${delay}\necho "error: this anvil refuses to start" >&2\nexit 1\n`);
      await chmod(anvil, 0o755);
      const stateDir = await tempDir("review-start-state-");
      process.env.DEVSTACK_ANVIL_BINARY = anvil;
      const before = new Set((await childProcesses()).map((p) => p.pid));
      const started = startDevStack({ proofs: "dev", stateDir });
      await expect(started).rejects.toMatchObject({ name: "ChainStartError" });
      expect((await childProcesses()).filter((p) => !before.has(p.pid))).toEqual([]);
      expect(await openUnder(CIRCUIT_BUILD_DIR)).toEqual([]);
      expect(await openUnder(stateDir)).toEqual([]);
      expect(await readdir(stateDir)).toEqual([]);
    });
  }

  it("a start that builds nothing ahead (a persisted stack resumed) leaves none of the proof files open either", async () => {
    const dir = await tempDir("review-start-anvil-");
    const anvil = path.join(dir, "anvil");
    await writeFile(anvil, `#!/bin/sh\necho "error: this anvil refuses to start" >&2\nexit 1\n`);
    await chmod(anvil, 0o755);
    const stateDir = await tempDir("review-start-state-");
    await writeFile(path.join(stateDir, "chain-state.json"), "{}");
    await writeFile(path.join(stateDir, "manifest.json"), "{}");
    process.env.DEVSTACK_ANVIL_BINARY = anvil;
    forgetProofHashes(); // as a new process: the files are hashed while anvil boots
    await expect(startDevStack({ stateDir, persist: true })).rejects.toMatchObject({ name: "ChainStartError" });
    expect(await openUnder(CIRCUIT_BUILD_DIR)).toEqual([]);
    expect((await readdir(stateDir)).sort()).toEqual(["chain-state.json", "manifest.json"]);
  });
});
