import { listProcesses } from "../../harness/process/index.ts";

/** Is this PID alive? (signal 0 probes without touching the process) */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until the PID is gone, up to a bound; returns whether it went. */
export async function gone(pid: number, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !alive(pid);
}

/** anvil processes whose command line carries a marker (a state dir): found by PID and args, never by name. */
export async function anvilsWith(marker: string): Promise<number[]> {
  return (await listProcesses()).filter((p) => p.args.includes("anvil") && p.args.includes(marker)).map((p) => p.pid);
}

/**
 * Ends what a test launched, emptying both lists: each child by `signal`, one after the other, each
 * awaited (a graceful signal lets a dev-stack stop its own anvil); then any PID still alive, by SIGKILL.
 */
export async function endLaunches(children: Array<{ kill(signal: NodeJS.Signals): unknown } & PromiseLike<unknown>>, signal: NodeJS.Signals, pids: number[] = []): Promise<void> {
  for (const child of children.splice(0)) {
    child.kill(signal);
    await Promise.resolve(child).catch(() => {});
  }
  for (const pid of pids.splice(0)) if (alive(pid)) process.kill(pid, "SIGKILL");
}
