import { accessSync, constants, statSync } from "node:fs";
import { constants as os } from "node:os";
import path from "node:path";
import { execa } from "execa";
import { guardedCommand } from "../process/index.ts";

/**
 * Where a command is, looked up as a shell does (a name with a slash as given, else along PATH), so that
 * one that cannot run is refused before a stack is started for it: 127 not found, 126 not executable.
 */
export function findCommand(name: string, pathVariable = process.env.PATH ?? ""): { file: string } | { exitCode: 126 | 127; reason: string } {
  const candidates = name.includes("/") ? [name] : pathVariable.split(path.delimiter).map((dir) => path.join(dir || ".", name));
  let notExecutable: string | undefined;
  for (const file of candidates) {
    try {
      if (!statSync(file).isFile()) continue;
    } catch {
      continue;
    }
    try {
      accessSync(file, constants.X_OK);
      return { file };
    } catch {
      notExecutable ??= file;
    }
  }
  return notExecutable ? { exitCode: 126, reason: `${notExecutable}: permission denied` } : { exitCode: 127, reason: `${name}: command not found` };
}

/** A shell's exit code for a process killed by a signal: 128 + its number (SIGINT 130, SIGTERM 143, SIGKILL 137). */
export function signalExitCode(signal: string): number {
  return 128 + ((os.signals as Record<string, number>)[signal] ?? 0);
}

export interface CommandResult {
  /** The command's exit code, or 128 + the signal's number if a signal killed it. */
  exitCode: number;
  /** The signal's name (SIGINT, ...), or null. */
  signal: string | null;
}

export interface RunningCommand {
  pid: number;
  /** Sends a signal to the command's whole process group (what it started too). */
  signal(signal: string): void;
  done: Promise<CommandResult>;
}

/**
 * Runs a command with the terminal's stdio and `env` added to ours. It is the leader of a process group
 * of its own (signals reach it through us, once, not also from the terminal), and it gets SIGTERM if we
 * die, SIGKILL included (the orphan guard's setpriv --pdeathsig, Linux). When it ends, whatever it left
 * running in its group gets SIGTERM, so nothing of it outlives the run holding a port.
 */
export function runCommand(command: readonly string[], env: Record<string, string>): RunningCommand {
  const [name, ...args] = command as [string, ...string[]];
  const guarded = guardedCommand(name, args);
  const child = execa(guarded.file, guarded.args, { stdio: "inherit", env, detached: true, reject: false, cleanup: false });
  const pid = child.pid as number;
  const signal = (signal: string) => {
    try {
      process.kill(-pid, signal);
    } catch {
      // the group is gone already
    }
  };
  const done = child.then((result) => {
    signal("SIGTERM");
    const killedBy = result.signal ?? null;
    if (killedBy) return { exitCode: signalExitCode(killedBy), signal: killedBy };
    // A spawn that failed (no exit code): as a shell says, 127 for a missing file, 126 otherwise.
    if (result.exitCode === undefined) return { exitCode: (result as { code?: string }).code === "ENOENT" ? 127 : 126, signal: null };
    return { exitCode: result.exitCode, signal: null };
  });
  return { pid, signal, done };
}
