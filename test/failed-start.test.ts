import { readFileSync } from "node:fs";
import { access, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AnvilExitedError, PortInUseError, startDevStack, type DevStackOptions, type StepEvent } from "../harness/index.ts";
import { freePort, holdPort } from "./support/ports.ts";
import { alive, anvilsWith } from "./support/processes.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

// A start that fails leaves nothing running and the state dir as it found it: one it made is gone, one
// that existed holds what it held. A busy port is found before anything starts; anvil dying during
// start-up is named as such.
const tempDir = withTempDirs();
const exists = (file: string) => access(file).then(() => true, () => false);

/** A new state dir (two levels the start would create) and an existing one holding a file of the user's. */
async function stateDirs() {
  const parent = await tempDir("devstack-failed-");
  await writeFile(path.join(parent, "notes.txt"), "mine");
  return { fresh: path.join(parent, "new", "state"), existing: parent, madeByStart: path.join(parent, "new") };
}

/** Starts a stack that must fail; returns the error and the steps it finished. */
async function failedStart(options: DevStackOptions, onStep?: (event: StepEvent) => void) {
  const steps: string[] = [];
  const error = await startDevStack({
    ...options,
    onProgress: (event) => {
      steps.push(event.step);
      onStep?.(event);
    },
  }).then(
    async (stack) => {
      await stack.stop();
      throw new Error("the start did not fail");
    },
    (e: unknown) => e as Error,
  );
  return { error, steps };
}

describe("a start that fails", () => {
  for (const role of ["chain", "queue"] as const) {
    it(`on a busy ${role} port, before anything starts or is written`, async () => {
      const holder = await holdPort();
      try {
        const { fresh, existing, madeByStart } = await stateDirs();
        for (const stateDir of [fresh, existing]) {
          const ports = role === "chain" ? { chainPort: holder.port, queuePort: 0 } : { chainPort: 0, queuePort: holder.port };
          const { error, steps } = await failedStart({ stateDir, ...ports });
          expect(error).toBeInstanceOf(PortInUseError);
          expect(error).toMatchObject({ port: holder.port, role, code: "EADDRINUSE" });
          expect(steps).toEqual(["check state dir"]); // no anvil, no manifest, no runtime
          expect(await anvilsWith(stateDir)).toEqual([]);
        }
        expect(await exists(madeByStart)).toBe(false);
        expect(await readdir(existing)).toEqual(["notes.txt"]);
      } finally {
        await holder.release();
      }
    });
  }

  it("late, when its queue port is taken after the check: what it wrote (the operation store included) is removed", async () => {
    const { fresh, existing, madeByStart } = await stateDirs();
    for (const stateDir of [fresh, existing]) {
      const queuePort = await freePort();
      let holder: Awaited<ReturnType<typeof holdPort>> | undefined;
      let taking: Promise<unknown> | undefined;
      // Taken while the manifest is written: anvil is up, the runtime and its store are still to come.
      const { error, steps } = await failedStart({ stateDir, queuePort }, (event) => {
        if (event.step === "write manifest") taking = holdPort(queuePort).then((held) => (holder = held));
      });
      await taking;
      await holder?.release();
      expect((error as NodeJS.ErrnoException).code).toBe("EADDRINUSE");
      expect(steps).toContain("write manifest");
      expect(await anvilsWith(stateDir)).toEqual([]);
    }
    expect(await exists(madeByStart)).toBe(false);
    expect(await readdir(existing)).toEqual(["notes.txt"]);
  });

  it("because anvil was killed during start-up: an AnvilExitedError says so, with its signal and last lines", async () => {
    const { fresh, existing, madeByStart } = await stateDirs();
    for (const stateDir of [fresh, existing]) {
      let killed: number | undefined;
      // SIGKILL by the PID the stack records, once anvil is up: the next steps need it.
      const { error, steps } = await failedStart({ stateDir }, (event) => {
        if (event.step !== "start anvil") return;
        killed = (JSON.parse(readFileSync(path.join(stateDir, "processes.json"), "utf8")) as { anvil: { pid: number } }).anvil.pid;
        process.kill(killed, "SIGKILL");
      });
      expect(steps).toContain("start anvil");
      expect(killed).toBeGreaterThan(0);
      expect(error).toBeInstanceOf(AnvilExitedError);
      expect(error).toMatchObject({ name: "AnvilExitedError", pid: killed, signal: "SIGKILL", exitCode: null });
      expect(error.message).toMatch(new RegExp(`^anvil \\(pid ${killed}\\) exited during the stack's start-up \\(killed by SIGKILL\\); its last lines:\\n`));
      expect(error.message).toContain("Listening on 127.0.0.1:");
      expect(error.message).not.toContain("ECONNREFUSED");
      expect((error as AnvilExitedError).lastLines.length).toBeGreaterThan(0);
      expect(alive(killed as number)).toBe(false);
    }
    expect(await exists(madeByStart)).toBe(false);
    expect(await readdir(existing)).toEqual(["notes.txt"]);
  });
});
