import { readFile } from "node:fs/promises";
import path from "node:path";
import { StackInfo } from "../../harness/stack-info/index.ts";
import { printable } from "../../src/printable.ts";

/** A sub-command's one-line failure: with the usage and exit 2 for a mistake in the call, exit 1 otherwise. */
export function failer(command: string, usage: string) {
  return (message: string, code: 1 | 2): never => {
    // A message may quote the stack's answers (an operation's failure, a loaded bundle's text): escaped.
    process.stderr.write(`queue-devstack ${command}: ${printable(message)}\n${code === 2 ? `${usage}\n` : ""}`);
    process.exit(code);
  };
}

/** The stack running from a state dir, as its stack.json describes it (written when it was ready). */
export async function runningStack(stateDir: string, fail: (message: string, code: 1 | 2) => never): Promise<StackInfo> {
  try {
    return StackInfo.parse(JSON.parse(await readFile(path.join(stateDir, "stack.json"), "utf8")));
  } catch {
    return fail(`no running stack in ${stateDir} (its stack.json): start one, or pass --state-dir`, 1);
  }
}
