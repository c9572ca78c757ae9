import { rmSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { readProcessRecord, TEMP_STATE_DIR_PREFIX } from "../../harness/state-dir/index.ts";
import { isAlive } from "../../harness/process/index.ts";

/**
 * vitest globalSetup (this repository's tests only): the run gets a TMPDIR of its own, inherited by
 * every worker and every process they start (dev-stack, anvil, runtimes), and at the end the run fails
 * if a test left anything in it. Every test removes what it made, pass or fail; other processes using
 * /tmp at the same time can neither make this check fail nor hide a leak from it, as they write elsewhere.
 */
export const RUN_TMPDIR_PREFIX = "queue-devstack-test-run-";

/**
 * The run's own caches, not a test's folders: Node's compile cache (npm and the installed CLI enable it), the
 * XDG cache the run points the fork RPC cache's default folder at, so that no test writes into the
 * user's ~/.cache (a fork stack without forkCacheDir keeps a file there per upstream).
 */
const RUN_CACHE = "xdg-cache";
/** The run's build of the CLI (test/support/cli-build.ts). */
export const RUN_CLI = "cli";
const NOT_A_LEFTOVER = new Set(["node-compile-cache", RUN_CACHE, RUN_CLI]);

/** How long the end of the run waits for workers still stopping their stacks. */
const STOPPING_GRACE_MS = 60_000;
/** How long a stack folder without its process record (one removing itself) is waited for. */
const RECORDLESS_GRACE_MS = 5_000;

let runDir: string | undefined;
let outerTmpdir: string | undefined;
let outerCache: string | undefined;

/**
 * An interrupted run (SIGINT, SIGTERM: vitest exits without tearing its global setup down) removes its
 * folder as it exits; a killed one (SIGKILL) has it removed by the next run, which knows the folder by
 * the PID in its name.
 */
const removeOnExit = () => {
  if (runDir !== undefined) rmSync(runDir, { recursive: true, force: true });
};

export async function setup(): Promise<void> {
  outerTmpdir = process.env.TMPDIR;
  await sweepDeadRuns(tmpdir());
  runDir = await mkdtemp(path.join(tmpdir(), `${RUN_TMPDIR_PREFIX}${process.pid}-`));
  process.once("exit", removeOnExit);
  process.env.TMPDIR = runDir;
  outerCache = process.env.XDG_CACHE_HOME;
  process.env.XDG_CACHE_HOME = path.join(runDir, RUN_CACHE);
}

export async function teardown(): Promise<void> {
  if (runDir === undefined) return;
  const dir = runDir;
  runDir = undefined;
  process.off("exit", removeOnExit);
  for (const [name, value] of [["TMPDIR", outerTmpdir], ["XDG_CACHE_HOME", outerCache]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  // vitest tears the global setup down without waiting for workers' worker-scoped fixtures (the
  // vitest integration's stack) to finish stopping: their stacks remove their own folders moments later.
  await stacksStopped(dir);
  const left = await leftBehind(dir);
  const described = await Promise.all(left.map((entry) => describeLeftover(dir, entry)));
  await rm(dir, { recursive: true, force: true });
  if (left.length > 0) {
    throw new Error(`the tests left ${left.length} temp folder(s) or file(s) behind (now removed): ${described.join("; ")}. Each test must remove what it made, whether it passes or fails.`);
  }
}

/** Removes the folders of runs whose process is gone (killed: no exit of theirs removed them); their names. */
export async function sweepDeadRuns(dir: string): Promise<string[]> {
  const dead = (await readdir(dir).catch(() => [] as string[])).filter((entry) => {
    const pid = new RegExp(`^${RUN_TMPDIR_PREFIX}(\\d+)-`).exec(entry)?.[1];
    return pid !== undefined && !isAlive(Number(pid));
  });
  await Promise.all(dead.map((entry) => rm(path.join(dir, entry), { recursive: true, force: true })));
  return dead;
}

/** What a test left in a run's TMPDIR. */
export async function leftBehind(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [] as string[])).filter((entry) => !NOT_A_LEFTOVER.has(entry)).sort();
}

/** A leftover, with what says who made it: its files, and a stack's owner PID and ports. */
async function describeLeftover(dir: string, entry: string): Promise<string> {
  const files = await readdir(path.join(dir, entry)).catch(() => undefined);
  if (files === undefined) return entry;
  const record = await readProcessRecord(path.join(dir, entry)).catch(() => undefined);
  const info = await readFile(path.join(dir, entry, "stack.json"), "utf8").then((text) => JSON.parse(text) as { rpcUrl?: string; queueUrl?: string }, () => undefined);
  const owner = record ? ` owner pid ${record.owner.pid}` : "";
  const urls = info ? ` ${info.rpcUrl ?? ""} ${info.queueUrl ?? ""}` : "";
  return `${entry} [${files.join(" ")}]${owner}${urls}`;
}

/** Waits (bounded) until no stack in the folder has an owner still running: a worker stopping its stack. */
export async function stacksStopped(dir: string, recordlessGraceMs = RECORDLESS_GRACE_MS): Promise<void> {
  const deadline = Date.now() + STOPPING_GRACE_MS;
  // A stack that is stopping removes its process record first, then its folder: a folder seen without
  // a record is given a moment to go before it counts as left behind.
  const recordless = new Map<string, number>();
  while (Date.now() < deadline) {
    const entries = (await readdir(dir).catch(() => [] as string[])).filter((entry) => entry.startsWith(TEMP_STATE_DIR_PREFIX));
    const records = await Promise.all(entries.map(async (entry) => [entry, await readProcessRecord(path.join(dir, entry))] as const));
    const now = Date.now();
    const waiting = records.some(([entry, record]) => {
      if (record) return record.owner.pid !== process.pid && isAlive(record.owner.pid);
      if (!recordless.has(entry)) recordless.set(entry, now);
      return now - (recordless.get(entry) as number) < recordlessGraceMs;
    });
    if (!waiting) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
