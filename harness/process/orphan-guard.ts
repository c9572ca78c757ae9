import { accessSync, constants } from "node:fs";
import path from "node:path";

/**
 * How a child is made to die with the process that started it, even when that process is SIGKILLed and
 * gets no chance to clean up. On Linux, util-linux's `setpriv --pdeathsig TERM` sets PR_SET_PDEATHSIG
 * and then execs the child: same PID, no extra process, and the child gets SIGTERM (a graceful stop: anvil
 * dumps its state) the moment its parent goes. Elsewhere there is no such guard, and a stack killed that
 * way is found and stopped at the next start through its process record (harness/state-dir/leftovers.ts).
 *
 * Linux sends the signal when the *thread* that spawned the child exits: a stack started in a worker
 * thread lives as long as that thread.
 *
 * DEVSTACK_ORPHAN_GUARD=off disables it (to debug a chain after its owner is gone).
 */
export function guardedCommand(binary: string, args: readonly string[]): { file: string; args: string[] } {
  const setpriv = process.env.DEVSTACK_ORPHAN_GUARD === "off" ? undefined : findSetpriv();
  return setpriv ? { file: setpriv, args: ["--pdeathsig", "TERM", "--", binary, ...args] } : { file: binary, args: [...args] };
}

let setprivPath: string | null | undefined;

function findSetpriv(): string | undefined {
  if (setprivPath === undefined) {
    setprivPath = null;
    if (process.platform === "linux") {
      for (const dir of (process.env.PATH ?? "").split(path.delimiter).concat("/usr/bin", "/bin")) {
        const candidate = path.join(dir, "setpriv");
        try {
          accessSync(candidate, constants.X_OK);
          setprivPath = candidate;
          break;
        } catch {
          /* not here */
        }
      }
    }
  }
  return setprivPath ?? undefined;
}
