import { readFileSync } from "node:fs";
import path from "node:path";

/** How often the launch is looked at: a signal to it is acted on within this. */
const WATCH_MS = 250;
/** A wake of the parent shell is taken as a signal only if no SIGCONT (ours, after a stop) came within this. */
const CONFIRM_MS = 100;

/**
 * What a CLI needs to hear of the processes that launched it, beyond the signals sent to itself:
 *
 * - its parent went (`npm run` or its `sh -c` killed by SIGTERM, or SIGKILLed): `onSignal("SIGTERM", "parent exited")`;
 * - npm's `sh -c` caught a SIGINT. npm passes SIGINT and SIGTERM to its script's shell only (its
 *   run-script signal-manager), and `npx <bin>` or a script without `exec` runs the bin under
 *   `sh -c '<bin> args'`. dash (Debian's sh, which never execs the last command) dies of SIGTERM but
 *   catches SIGINT and keeps it until its child ends, so the bin never hears of it. A shell waiting for
 *   its child sleeps until a signal it catches wakes it, and /proc counts every wake (its context
 *   switches): a wake while we run is that SIGINT. The other wake, SIGCHLD for our stop and continue
 *   (Ctrl-Z, fg), comes with a SIGCONT of ours and is not taken as one. Linux only: elsewhere nothing is read.
 *
 * The watch's timer does not keep the process alive.
 */
export function watchLaunch(onSignal: (signal: NodeJS.Signals, why: string) => void): void {
  const parent = process.ppid;
  const shell = npmScriptShell(parent);
  let wakes = shell ? wakesOf(parent) : undefined;
  let continuedAt = -Infinity;
  process.on("SIGCONT", () => {
    continuedAt = performance.now();
    wakes = wakesOf(parent);
  });
  let confirming = false;
  setInterval(() => {
    if (process.ppid !== parent) return onSignal("SIGTERM", "parent exited");
    if (wakes === undefined || confirming) return;
    const now = wakesOf(parent);
    if (now === undefined || now === wakes) return;
    confirming = true;
    const seenAt = performance.now();
    setTimeout(() => {
      confirming = false;
      if (continuedAt >= seenAt - WATCH_MS) return; // a stop and continue, not a signal
      wakes = wakesOf(parent);
      onSignal("SIGINT", `SIGINT to ${shell}`);
    }, CONFIRM_MS).unref();
  }, WATCH_MS).unref();
}

/** The parent's name if it is the `sh -c` of an npm script or npx (whose signals it keeps), else undefined. */
function npmScriptShell(pid: number, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.npm_lifecycle_event === undefined) return undefined;
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return undefined;
  }
  const name = path.basename(argv[0] ?? "");
  return ["sh", "dash", "bash"].includes(name) && argv[1] === "-c" ? `npm's ${name} -c (pid ${pid})` : undefined;
}

/** How many times a process was switched to (it woke, or was scheduled again), from /proc. */
function wakesOf(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const count = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? Number.NaN);
    const total = count("voluntary_ctxt_switches") + count("nonvoluntary_ctxt_switches");
    return Number.isNaN(total) ? undefined : total;
  } catch {
    return undefined;
  }
}
