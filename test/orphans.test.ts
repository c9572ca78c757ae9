import { access, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { startDevStack } from "../harness/index.ts";
import { alive, endLaunches, gone } from "./support/processes.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

// anvil must not outlive the process that started it, however that process dies: killed outright, or
// a vitest run interrupted while a test holds a stack.
interface Started {
  chainPid: number;
  stateDir: string;
  marker: string;
}
const tempDir = withTempDirs();
const children: ResultPromise[] = [];
const pids: number[] = [];
/** State dirs of stacks whose owner was killed: nobody stops them, so the test removes them. */
const abandoned: string[] = [];
afterEach(async () => {
  await endLaunches(children, "SIGKILL", pids);
  await Promise.all(abandoned.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const exists = (file: string) => access(file).then(() => true, () => false);

describe("a stack whose owner dies", () => {
  it("owner SIGKILLed: its anvil goes with it, and the next library start removes the abandoned temp dir", async () => {
    const child = execa(process.execPath, ["--experimental-strip-types", "--no-warnings", "test/fixtures/owner-killed/start-stack.ts"], { reject: false });
    children.push(child);
    const started = await new Promise<Started>((resolve, reject) => {
      let out = "";
      child.stdout?.on("data", (d: Buffer) => ((out += d.toString()), out.includes("\n") && resolve(JSON.parse(out.split("\n")[0] as string) as Started)));
      void child.then((r) => reject(new Error(`owner exited ${r.exitCode}: ${r.stderr}`)));
    });
    pids.push(started.chainPid);
    abandoned.push(started.stateDir);
    expect(alive(started.chainPid)).toBe(true);

    child.kill("SIGKILL");
    await child;
    expect(await gone(started.chainPid, 5_000)).toBe(true);
    // Nobody cleans up but the next library start, here or in another test worker running now (every
    // start sweeps what dead owners left): this test's own start is the one that must not miss it.
    const next = await startDevStack();
    try {
      expect(await exists(started.stateDir)).toBe(false);
    } finally {
      await next.stop();
    }
  });

  it.each([
    ["forks pool, startDevStack in the test", "test/fixtures/owner-killed/vitest.config.ts"],
    ["threads pool, the vitest integration's worker stack", "test/fixtures/owner-killed/vitest.threads.config.ts"],
  ])("a vitest run interrupted (SIGINT) while a test holds a stack leaves no anvil (%s)", async (_, config) => {
    const infoFile = path.join(await tempDir("devstack-interrupt-"), "stack.json");
    const vitest = execa(process.execPath, ["node_modules/vitest/vitest.mjs", "run", "--config", config], {
      reject: false,
      env: { STACK_INFO_FILE: infoFile, CI: "1" },
    });
    children.push(vitest);
    let exited = false;
    void vitest.then(() => (exited = true));
    const deadline = Date.now() + 60_000;
    while (!(await exists(infoFile))) {
      if (Date.now() > deadline || exited) throw new Error(`the fixture test never started its stack: ${(await vitest).stdout}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const started = JSON.parse(await readFile(infoFile, "utf8")) as Started;
    pids.push(started.chainPid);
    abandoned.push(started.stateDir);
    expect(alive(started.chainPid)).toBe(true);

    vitest.kill("SIGINT");
    const result = await vitest;
    expect(result.exitCode).not.toBe(0);
    expect(await gone(started.chainPid, 5_000)).toBe(true);
  });
});
