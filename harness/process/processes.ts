import { readdirSync, readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { execa } from "execa";

/** One process as `ps` shows it. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  args: string;
}

/**
 * Every process, as `ps -A -o pid=,ppid=,args=` lists them: read from /proc on Linux (spawning ps from
 * a large process costs tens of milliseconds, and leftover checks ask often), else from ps (macOS).
 * We match on PIDs and full command lines, never on names.
 */
export async function listProcesses(): Promise<ProcessInfo[]> {
  const fromProc = process.platform === "linux" ? await procProcesses() : undefined;
  if (fromProc) return fromProc;
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
  return raw === undefined ? undefined : joinedArgs(raw);
}

/** /proc/<pid>/cmdline's NUL-separated arguments joined by spaces, as ps shows them; undefined if empty. */
function joinedArgs(raw: string): string | undefined {
  return raw === "" ? undefined : raw.replace(/\0$/, "").split("\0").join(" ");
}

/**
 * Every process in /proc; undefined if it cannot be read or does not list this process (a /proc of
 * another PID namespace), and then ps answers. One that ends meanwhile is left out, as ps would. Read
 * synchronously: about a millisecond for the whole table, where the same reads through the thread pool
 * cost ten times the CPU.
 */
async function procProcesses(): Promise<ProcessInfo[] | undefined> {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  const found: ProcessInfo[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    let cmdline: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
    } catch {
      continue; // ended meanwhile
    }
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ")".
    const close = stat.lastIndexOf(")");
    const ppid = Number(stat.slice(close + 2).split(" ")[1]);
    // A kernel thread or a zombie has no command line: ps shows its name in brackets.
    const args = joinedArgs(cmdline) ?? `[${stat.slice(stat.indexOf("(") + 1, close)}]`;
    found.push({ pid: Number(entry), ppid, args });
  }
  return found.some((p) => p.pid === process.pid) ? found : undefined;
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
