import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa } from "execa";

/**
 * The benchmarks' launch timing: starts `node <args>` with a fresh temp state dir (args(stateDir)), times
 * it until its first stdout data, then stops it with SIGINT, waits for it and removes the state dir, also
 * when it failed.
 */
export async function launchToFirstOutput(args: (stateDir: string) => string[], prefix: string): Promise<number> {
  const stateDir = await mkdtemp(path.join(tmpdir(), prefix));
  const started = performance.now();
  const child = execa(process.execPath, args(stateDir), { reject: false });
  try {
    return await new Promise<number>((resolve, reject) => {
      child.stdout?.once("data", () => resolve(performance.now() - started));
      void child.then((r) => reject(new Error(`the CLI exited ${r.exitCode}: ${r.stderr}`)));
    });
  } finally {
    child.kill("SIGINT");
    await child;
    await rm(stateDir, { recursive: true, force: true });
  }
}
