import { createHash, randomUUID } from "node:crypto";
import { link, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { z } from "zod";
import { ANVIL_RUN_DIR_PREFIX } from "../chain/index.ts";
import { writeFileAtomic } from "../files/index.ts";
import { commandLineOf, isAlive, listProcesses, stopPid } from "../process/index.ts";
import { QueueDevstackError } from "../../src/errors/index.ts";

export class StackAlreadyRunningError extends QueueDevstackError {
  override name = "StackAlreadyRunningError";
  readonly code = "stack_already_running";
}

export type LeftoverReport = { found: false } | { found: true; stoppedAnvilPids: number[] };

/**
 * `<state-dir>/processes.json`: who owns the state dir and which anvil it started. Written before
 * anything is spawned and updated the moment anvil's PID is known, so a run killed at any step (even
 * by SIGKILL, before it was ready) leaves enough behind for the next start to find its anvil.
 */
const ProcessRecord = z.strictObject({
  version: z.literal(1),
  /** The owning process (dev-stack, or a test runner) and a sha256 of its command line (it may carry credentials). */
  owner: z.strictObject({ pid: z.int(), commandSha256: z.string() }),
  /** anvil's unique command-line marker, and its PID once known. */
  anvil: z.strictObject({ pid: z.int().nullable(), marker: z.string() }).nullable(),
});
export type ProcessRecord = z.output<typeof ProcessRecord>;

const RECORD = "processes.json";

export function processRecordPath(stateDir: string): string {
  return path.join(stateDir, RECORD);
}

export async function writeProcessRecord(stateDir: string, record: Omit<ProcessRecord, "version">): Promise<void> {
  await writeFileAtomic(processRecordPath(stateDir), recordText(record));
}

const recordText = (record: Omit<ProcessRecord, "version">) => `${JSON.stringify({ version: 1, ...record }, null, 2)}\n`;

export async function readProcessRecord(stateDir: string): Promise<ProcessRecord | undefined> {
  return parseRecord(await readFile(processRecordPath(stateDir), "utf8").catch(() => undefined));
}

function parseRecord(text: string | undefined): ProcessRecord | undefined {
  try {
    return text === undefined ? undefined : ProcessRecord.parse(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/**
 * Makes this process the state dir's owner, only if no start claimed it since it was reclaimed: the
 * record is linked into place (link never replaces a file), so of two starts on one state dir that
 * both found it free, the second is refused by name instead of writing over the first's record.
 */
export async function claimStateDir(stateDir: string, owner: ProcessRecord["owner"]): Promise<void> {
  const file = processRecordPath(stateDir);
  const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  await mkdir(stateDir, { recursive: true });
  await writeFile(tmp, recordText({ owner, anvil: null }));
  try {
    await link(tmp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    throw busy(stateDir, (await readProcessRecord(stateDir))?.owner.pid);
  } finally {
    await rm(tmp, { force: true });
  }
}

/** This process's owner entry: its PID and a hash of its command line. */
export async function currentOwner(): Promise<ProcessRecord["owner"]> {
  return { pid: process.pid, commandSha256: sha256((await commandLineOf(process.pid)) ?? "") };
}

function busy(stateDir: string, pid: number | undefined): StackAlreadyRunningError {
  return new StackAlreadyRunningError(`a stack is already running from ${stateDir} (pid ${pid ?? "unknown"}); stop it, or choose another --state-dir`);
}

/**
 * A stack left behind by a killed run is found through its process record. Its anvil is stopped only
 * if the recorded PID is alive and its command line still carries the recorded marker (PIDs get
 * reused); with no PID recorded yet, the process carrying the marker is found by its command line.
 * If the owning process itself is still running, the state dir is busy and we refuse.
 */
export async function reclaimStateDir(stateDir: string): Promise<LeftoverReport> {
  const text = await readFile(processRecordPath(stateDir), "utf8").catch(() => undefined);
  const record = parseRecord(text);
  if (record && record.owner.pid !== process.pid && (await ownerRunning(record.owner))) throw busy(stateDir, record.owner.pid);
  // anvil's config output, if a run died before removing it (only now: a running owner's anvil may be writing it).
  await removeAnvilRunDirs(stateDir);
  if (text === undefined) return { found: false };
  // A damaged record names no owner to wait for: removed like a dead owner's.
  if (!record) return (await dropRecord(stateDir, text), { found: false });
  const { anvil } = record;
  const stoppedAnvilPids: number[] = [];
  if (anvil) {
    const processes = await listProcesses();
    const carrying = processes.filter((p) => p.args.includes(anvil.marker)).map((p) => p.pid);
    const pids = anvil.pid !== null && carrying.includes(anvil.pid) ? [anvil.pid] : carrying;
    // SIGTERM first: a persisted chain is dumped on a graceful stop.
    await Promise.all(pids.map((pid) => stopPid(pid)));
    stoppedAnvilPids.push(...pids);
  }
  await dropRecord(stateDir, text);
  await rm(path.join(stateDir, "stack.json"), { force: true });
  return { found: true, stoppedAnvilPids };
}

/**
 * Removes the record read (`stale`, its text), and only it: another start that reclaimed the same record
 * may have claimed the state dir since. The record is moved aside (one mover wins) and read: another
 * claim is put back, and this start refused.
 */
async function dropRecord(stateDir: string, stale: string): Promise<void> {
  const file = processRecordPath(stateDir);
  const aside = `${file}.${process.pid}.${randomUUID()}.stale`;
  try {
    await rename(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return; // another start removed it
    throw error;
  }
  try {
    const moved = await readFile(aside, "utf8");
    if (moved !== stale) {
      await link(aside, file).catch(() => {});
      throw busy(stateDir, parseRecord(moved)?.owner.pid);
    }
  } finally {
    await rm(aside, { force: true });
  }
}

async function ownerRunning(owner: ProcessRecord["owner"]): Promise<boolean> {
  if (!isAlive(owner.pid)) return false;
  const command = await commandLineOf(owner.pid);
  return command !== undefined && sha256(command) === owner.commandSha256;
}

async function removeAnvilRunDirs(stateDir: string): Promise<void> {
  const entries = await readdir(stateDir).catch(() => [] as string[]);
  await Promise.all(entries.filter((e) => e.startsWith(ANVIL_RUN_DIR_PREFIX)).map((e) => rm(path.join(stateDir, e), { recursive: true, force: true })));
}

/** Prefix of the temp state dirs the library creates for stacks started without a stateDir. */
export const TEMP_STATE_DIR_PREFIX = "queue-devstack-";

/**
 * Temp state dirs of library stacks whose owner died without stopping them (a test worker SIGKILLed,
 * an interrupted run): their anvil, if it survived, is stopped and the dir removed. Only dirs with our
 * prefix and a record whose owner is gone are touched.
 */
export async function sweepAbandonedTempStacks(): Promise<string[]> {
  const root = tmpdir();
  const entries = await readdir(root).catch(() => [] as string[]);
  const swept: string[] = [];
  for (const entry of entries.filter((e) => e.startsWith(TEMP_STATE_DIR_PREFIX))) {
    const dir = path.join(root, entry);
    const record = await readProcessRecord(dir);
    if (!record || record.owner.pid === process.pid || (await ownerRunning(record.owner))) continue;
    try {
      await reclaimStateDir(dir);
      await rm(dir, { recursive: true, force: true });
      swept.push(dir);
    } catch {
      /* another process is reclaiming it, or it came back to life: leave it */
    }
  }
  return swept;
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
