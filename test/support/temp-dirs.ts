import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll } from "vitest";

/**
 * Temp folders for one test file: each made in the run's TMPDIR, all removed after the file's tests,
 * whether they pass or fail. Call it at the top of the file, before hooks that stop what uses the
 * folders: vitest runs afterAll hooks last-registered first.
 */
export function withTempDirs(): (prefix: string) => Promise<string> {
  const made: string[] = [];
  afterAll(async () => {
    await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async (prefix) => {
    const dir = await mkdtemp(path.join(tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
}
