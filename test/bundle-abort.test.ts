import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { PassThrough } from "node:stream";
import { gzipSync } from "node:zlib";
import { execa } from "execa";
import { beforeAll, describe, expect, it } from "vitest";
import { startDevStack } from "../harness/index.ts";
import { startChain } from "../harness/chain/index.ts";
import { gunzipBounded } from "../harness/bundle/index.ts";
import { alive, anvilsWith } from "./support/processes.ts";
import { withStacks } from "./support/stacks.ts";
import { withTempDirs } from "./support/temp-dirs.ts";
import { interruptPreload } from "./support/interrupt-at.ts";
import { builtCli } from "./support/cli.ts";

// A signal during a good bundle's load gives the start up wherever it is: what started is stopped and
// the state dir is left byte for byte as it was found (before, the start ran to its end, then stopped,
// the bundle's files left behind).
const tempDir = withTempDirs();
const startStack = withStacks();
const CLI = builtCli();
/** The steps of a bundle's load, each reported as it ends (the last one's end leaves parts still to start). */
const LOAD_STEPS = ["check state dir", "unpack bundle", "load contracts", "start anvil", "resume saved chain", "check manifest", "start queue runtime"];
let dir: string;
let bundle: string;
/** The preload that makes the CLI signal itself as it prints a step's line: the signal lands at that point of the start, every run. */
let interruptAt: string;

beforeAll(async () => {
  dir = await tempDir("devstack-abort-");
  bundle = path.join(dir, "good.qdbundle");
  const stack = await startStack();
  try {
    await stack.save(bundle);
  } finally {
    await stack.stop();
  }
  interruptAt = await interruptPreload(dir);
});

/** A state dir holding files of the user's, and a check that it is byte for byte so, with no anvil of it running. */
async function stateDirWithFiles(): Promise<{ stateDir: string; asFound: () => Promise<void> }> {
  const stateDir = await tempDir("devstack-abort-state-");
  await writeFile(path.join(stateDir, "notes.txt"), "mine");
  await mkdir(path.join(stateDir, "keep"));
  await writeFile(path.join(stateDir, "keep", "data.bin"), Buffer.from([0, 1, 2, 255]));
  const before = await contents(stateDir);
  return {
    stateDir,
    asFound: async () => {
      expect(await contents(stateDir)).toEqual(before);
      // Every anvil of ours carries a path of its state dir in its command line.
      expect(await anvilsWith(stateDir)).toEqual([]);
    },
  };
}

/** Every entry under a folder (hidden ones too), with a file's bytes. */
async function contents(folder: string): Promise<Record<string, string>> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  const out: Record<string, string> = {};
  for (const entry of entries.sort((a, b) => path.join(a.parentPath, a.name).localeCompare(path.join(b.parentPath, b.name)))) {
    const full = path.join(entry.parentPath, entry.name);
    out[path.relative(folder, full)] = entry.isFile() ? (await readFile(full)).toString("hex") : entry.isDirectory() ? "(folder)" : "(other)";
  }
  return out;
}

/** The CLI loading the bundle (or `exec` with it), signalled by itself as it prints `step`'s line. */
function loadInterrupted(stateDir: string, step: string, signal: "SIGINT" | "SIGTERM", exec = false) {
  const args = ["--load", bundle, "--state-dir", stateDir, "--chain-port", "0", "--queue-port", "0"];
  return execa(process.execPath, ["--import", interruptAt, ...CLI, ...(exec ? ["exec", ...args, "--", "true"] : args)], {
    reject: false,
    env: { INTERRUPT_AT_STEP: step, INTERRUPT_SIGNAL: signal },
    // Under the test's own timeout: a CLI that never ends is ended (then killed), never left behind.
    timeout: 45_000,
  });
}

describe("a signal while a good bundle loads (the CLI)", () => {
  it("the load takes these steps", async () => {
    const { stateDir } = await stateDirWithFiles();
    const steps: string[] = [];
    const stack = await startStack({ load: bundle, stateDir, onProgress: ({ step }) => steps.push(step) });
    await stack.stop();
    expect(steps).toEqual(LOAD_STEPS);
  });

  it.each(LOAD_STEPS)("SIGINT once %s has ended: exit 0, everything stopped, the state dir byte for byte as found", async (step) => {
    const { stateDir, asFound } = await stateDirWithFiles();
    const ended = await loadInterrupted(stateDir, step, "SIGINT");
    expect(ended.exitCode, ended.stderr).toBe(0);
    expect(ended.stderr).toBe("");
    // The steps up to the signal, then the stop: never the summary of a stack that came up.
    expect(ended.stdout).toMatch(new RegExp(`  ${step} .*\\n\\nSIGINT: stopping the stack\\.\\.\\.\\nstopped\\.$`));
    expect(ended.stdout).not.toContain("ready in");
    await asFound();
  });

  it("SIGTERM while it unpacks: the same", async () => {
    const { stateDir, asFound } = await stateDirWithFiles();
    const ended = await loadInterrupted(stateDir, "check state dir", "SIGTERM");
    expect(ended.exitCode, ended.stderr).toBe(0);
    expect(ended.stdout).toMatch(/\n\nSIGTERM: stopping the stack\.\.\.\nstopped\.$/);
    await asFound();
  });

  it("exec: SIGINT while anvil starts runs nothing, exits 130, the state dir as found", async () => {
    const { stateDir, asFound } = await stateDirWithFiles();
    const ended = await loadInterrupted(stateDir, "load contracts", "SIGINT", true);
    expect(ended.exitCode, ended.stderr).toBe(130);
    expect(ended.stderr).toMatch(/\n\nSIGINT: stopping the stack\.\.\.\nstopped\.$/);
    expect(ended.stderr).not.toContain("running true");
    await asFound();
  });
});

describe("startDevStack({ signal }) while a good bundle loads", () => {
  it.each(LOAD_STEPS)("aborted once %s has ended: rejects with the signal's reason, nothing running, the state dir byte for byte as found", async (step) => {
    const { stateDir, asFound } = await stateDirWithFiles();
    const controller = new AbortController();
    const reason = new Error("given up");
    const steps: string[] = [];
    const onProgress = ({ step: ended }: { step: string }) => {
      steps.push(ended);
      if (ended === step) controller.abort(reason);
    };
    const started = startDevStack({ load: bundle, stateDir, signal: controller.signal, onProgress });
    // A stack that starts all the same is stopped after the file's tests (and this one fails).
    void started.then((stack) => stack.stop(), () => {});
    await expect(started).rejects.toBe(reason);
    // Given up where it was: at most the step under way (in the same part) ends after the abort.
    expect(steps).toEqual(LOAD_STEPS.slice(0, steps.length));
    expect(steps.length).toBeLessThanOrEqual(LOAD_STEPS.indexOf(step) + 2);
    await asFound();
  });

  it("a signal aborted already: rejects at once with its reason, nothing done", async () => {
    const { stateDir, asFound } = await stateDirWithFiles();
    const steps: string[] = [];
    const reason = new Error("already given up");
    await expect(startDevStack({ load: bundle, stateDir, signal: AbortSignal.abort(reason), onProgress: ({ step }) => steps.push(step) })).rejects.toBe(reason);
    expect(steps).toEqual([]);
    await asFound();
  });

  it("an abort after the start has no effect: the stack runs until stop()", async () => {
    const { stateDir } = await stateDirWithFiles();
    const controller = new AbortController();
    const stack = await startStack({ load: bundle, stateDir, signal: controller.signal });
    controller.abort();
    expect((await fetch(`${stack.queueUrl}/api/queue/health`)).status).toBe(200);
    expect(await anvilsWith(stateDir)).toEqual([stack.chainPid]);
    await stack.stop();
  });

  it("a part's decompression stops when aborted, even with its input never ending", async () => {
    // Half a gzip, then nothing more, ever: only the signal ends the wait.
    const source = new PassThrough();
    source.write(gzipSync(Buffer.alloc(1024 * 1024, 7)).subarray(0, 200));
    const controller = new AbortController();
    const unpacking = gunzipBounded(source, 1024 * 1024 * 1024, path.join(dir, "never.out"), controller.signal);
    await new Promise(setImmediate);
    controller.abort();
    await expect(unpacking).rejects.toMatchObject({ name: "AbortError" });
    expect(source.destroyed).toBe(true);
  });

  it("anvil aborted as it starts: killed, startChain rejects with the reason, its run folder removed", async () => {
    const { stateDir, asFound } = await stateDirWithFiles();
    const controller = new AbortController();
    const reason = new Error("given up");
    const seen: number[] = [];
    // Aborted the moment anvil's process is there (it may be listening by then: the outcome is the same).
    const onProcess = async ({ marker, pid }: { marker: string; pid: number | null }) => {
      if (pid !== null) return;
      void (async () => {
        while (!controller.signal.aborted) {
          const found = await anvilsWith(marker);
          if (found.length > 0) return (seen.push(...found), controller.abort(reason));
          await new Promise(setImmediate);
        }
      })();
    };
    const started = startChain({ host: "127.0.0.1", port: 0, stateDir, onProcess, signal: controller.signal });
    void started.then((chain) => chain.stop(), () => {}); // one that starts all the same (this test then fails) is stopped
    await expect(started).rejects.toBe(reason);
    expect(seen).toHaveLength(1);
    expect(alive(seen[0] as number)).toBe(false);
    await asFound();
  });
});
