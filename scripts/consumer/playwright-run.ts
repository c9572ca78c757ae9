import { readdir, readlink } from "node:fs/promises";
import type { Options, ResultPromise } from "execa";
import { listProcesses } from "../../harness/process/index.ts";

/** What a Playwright run makes in the consumer's TMPDIR: stacks' state dirs and Chromium's profiles. */
export async function madeInTmp(tmp: string): Promise<string[]> {
  return (await readdir(tmp)).filter((name) => /^(queue-devstack-|playwright_chromium)/.test(name));
}

/**
 * What a run in `dir` left: processes naming `dir` or `tmp`, or working in `dir` (a webServer's
 * `node server.mjs` names neither), and temp folders not in `before`.
 */
export async function leftBehind(dir: string, tmp: string, before: Set<string>): Promise<string[]> {
  const processes = await Promise.all(
    (await listProcesses()).map(async (p) => ({ ...p, cwd: await readlink(`/proc/${p.pid}/cwd`).catch(() => undefined) })),
  );
  return [
    ...processes.filter((p) => p.args.includes(dir) || p.args.includes(tmp) || p.cwd === dir).map((p) => `${p.pid} ${p.args}`),
    ...(await madeInTmp(tmp)).filter((name) => !before.has(name)),
  ];
}

/** Runs a command in the project's folder (inProject with its cwd and the user's environment). */
export type InDir = (file: string, args: string[], options?: Options) => ResultPromise;

/**
 * `npx playwright test` in `dir`: a run that found fewer tests would pass too, so all `tests` must be
 * the passes, on two workers; then nothing may be left running, nor a temp folder.
 */
export async function passesOnTwoWorkers({ inDir, dir, tmp, env, tests }: { inDir: InDir; dir: string; tmp: string; env: Record<string, string>; tests: number }): Promise<void> {
  const before = new Set(await madeInTmp(tmp));
  const run = await inDir("npx", ["playwright", "test", "--reporter=line"], { reject: false, timeout: 180_000, env });
  const all = String(run.all ?? "");
  if (run.exitCode !== 0 || !new RegExp(`Running ${tests} tests using 2 workers`).test(all) || !new RegExp(`\\b${tests} passed\\b`).test(all)) {
    throw new Error(`npx playwright test: exit ${run.exitCode}\n${all}`);
  }
  const left = await leftBehind(dir, tmp, before);
  if (left.length > 0) throw new Error(`left behind: ${left.join("; ")}`);
}
