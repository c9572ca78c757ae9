import { readdir, readFile } from "node:fs/promises";
import { execa } from "execa";

/** One process as `ps` shows it. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  args: string;
}

/** Lists processes with ps (Linux and macOS). We match on PIDs and full command lines, never on names. */
export async function listProcesses(): Promise<ProcessInfo[]> {
  const { stdout } = await execa("ps", ["-A", "-o", "pid=,ppid=,args="]);
  return stdout
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] ?? "" }));
}

/**
 * A process's command line as ps shows it (its arguments joined by spaces). On Linux read from /proc:
 * a start asks twice (its own, and its anvil's), and spawning ps costs tens of milliseconds each time.
 */
export async function commandLineOf(pid: number): Promise<string | undefined> {
  if (process.platform === "linux") return procCommandLine(pid);
  return (await listProcesses()).find((p) => p.pid === pid)?.args;
}

/** This process's own children (spawned by any of its threads), with their command lines. */
export async function childProcesses(): Promise<ProcessInfo[]> {
  const fromProc = process.platform === "linux" ? await procChildren() : undefined;
  return fromProc ?? (await listProcesses()).filter((p) => p.ppid === process.pid);
}

async function procCommandLine(pid: number): Promise<string | undefined> {
  const raw = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => undefined);
  // A zombie's is empty, and ps shows it in brackets: not the command it ran, as for ps.
  return raw === undefined || raw === "" ? undefined : raw.replace(/\0$/, "").split("\0").join(" ");
}

/** From /proc/<pid>/task/<tid>/children; undefined where the kernel does not list them. */
async function procChildren(): Promise<ProcessInfo[] | undefined> {
  try {
    const tasks = await readdir(`/proc/${process.pid}/task`);
    const lists = await Promise.all(tasks.map((tid) => readFile(`/proc/${process.pid}/task/${tid}/children`, "utf8")));
    const pids = lists.flatMap((list) => list.split(/\s+/).filter(Boolean).map(Number));
    const found = await Promise.all(pids.map(async (pid) => ({ pid, ppid: process.pid, args: await procCommandLine(pid) })));
    return found.filter((p): p is ProcessInfo => p.args !== undefined);
  } catch {
    return undefined;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Stops a process by PID: SIGTERM (anvil dumps state on a graceful stop), then SIGKILL after a grace period. */
export async function stopPid(pid: number, graceMs = 5_000): Promise<void> {
  if (!isAlive(pid)) return;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    /* already gone */
  }
}
