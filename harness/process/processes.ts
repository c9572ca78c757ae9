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

export async function commandLineOf(pid: number): Promise<string | undefined> {
  return (await listProcesses()).find((p) => p.pid === pid)?.args;
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
