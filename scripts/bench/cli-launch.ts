import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa } from "execa";

/** What a launch may watch: its stderr lines as they arrive, and the process once it is ready. */
export interface LaunchHooks {
  /** Each stderr line, with the milliseconds since the launch when it arrived. */
  stderrLine?(line: string, atMs: number): void;
  /** Runs once the first stdout data arrived, before the process is stopped (an idle wait, a sample of its memory). */
  ready?(pid: number): Promise<void>;
}

/**
 * The benchmarks' launch timing: starts `node <args>` with a fresh temp state dir (args(stateDir)), times
 * it until its first stdout data, then stops it with SIGINT, waits for it and removes the state dir, also
 * when it failed. With `keptStateDir`, the launch runs from that one instead and leaves it (a project's
 * `.devstack`, launched again), for the caller to remove.
 */
export async function launchToFirstOutput(args: (stateDir: string) => string[], prefix: string, hooks: LaunchHooks = {}, keptStateDir?: string): Promise<number> {
  const stateDir = keptStateDir ?? (await mkdtemp(path.join(tmpdir(), prefix)));
  const started = performance.now();
  const child = execa(process.execPath, args(stateDir), { reject: false });
  let partial = "";
  child.stderr?.on("data", (d: Buffer) => {
    const lines = (partial + d.toString()).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) hooks.stderrLine?.(line, performance.now() - started);
  });
  try {
    const elapsed = await new Promise<number>((resolve, reject) => {
      child.stdout?.once("data", () => resolve(performance.now() - started));
      void child.then((r) => reject(new Error(`the CLI exited ${r.exitCode}: ${r.stderr}`)));
    });
    await hooks.ready?.(child.pid as number);
    return elapsed;
  } finally {
    child.kill("SIGINT");
    await child;
    if (keptStateDir === undefined) await rm(stateDir, { recursive: true, force: true });
  }
}
