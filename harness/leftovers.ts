import { createHash } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { commandLineOf, isAlive, stopPid } from "./processes.ts";
import { StackInfo } from "./stack-info.ts";

export class StackAlreadyRunningError extends Error {
  override name = "StackAlreadyRunningError";
}

export type LeftoverReport = { found: false } | { found: true; stoppedAnvilPid: number | null };

/**
 * A stack left behind by a killed run is found through the stack.json it wrote. Its anvil is stopped
 * only if the PID is alive and its command line still carries that stack's unique marker (PIDs get
 * reused); if the owning process is itself still running, the state dir is busy and we refuse.
 */
export async function reclaimStateDir(stateDir: string): Promise<LeftoverReport> {
  const file = path.join(stateDir, "stack.json");
  let info: StackInfo;
  try {
    info = StackInfo.parse(JSON.parse(await readFile(file, "utf8")));
  } catch {
    return { found: false };
  }
  const { owner, anvil } = info.processes;
  const ownerCommand = owner.pid === process.pid || !isAlive(owner.pid) ? undefined : await commandLineOf(owner.pid);
  if (ownerCommand !== undefined && createHash("sha256").update(ownerCommand).digest("hex") === owner.commandSha256) {
    throw new StackAlreadyRunningError(
      `a stack is already running from ${stateDir} (pid ${owner.pid}); stop it, or choose another --state-dir`,
    );
  }
  let stoppedAnvilPid: number | null = null;
  if (isAlive(anvil.pid) && (await commandLineOf(anvil.pid))?.includes(anvil.marker)) {
    await stopPid(anvil.pid);
    stoppedAnvilPid = anvil.pid;
  }
  await rm(file, { force: true });
  return { found: true, stoppedAnvilPid };
}
