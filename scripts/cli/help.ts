import { CLI_OPTIONS, optionLabel, type CliOption } from "./options.ts";

// `queue-devstack --help`: the usage of the command and its sub-commands, then the options and the
// environment from the option table (options.ts).
const USAGE = `Usage: npx queue-devstack [options]    (in a package.json script: queue-devstack [options])

Starts a throwaway queue stack: anvil (chain id 11155111), the Pool, its manifest and the queue runtime.
Ctrl-C (or SIGTERM) stops everything and exits 0.

       queue-devstack exec [options] [--runs <n>] -- <command> [args…]
Starts a stack (the options below; ports default to 0 = free ones, the state dir to a temp dir), runs the
command with the stack in its environment (QUEUE_DEVSTACK_RPC_URL, QUEUE_DEVSTACK_QUEUE_URL, ...), forwards
SIGINT, SIGTERM and SIGHUP to it, stops the stack when it ends and exits with its exit code (128+n if signal n
killed it; 127 if it is not found). --runs <n> runs it n times, the stack reset (not restarted) between runs,
until one fails.

       queue-devstack trace <operation id> [--state-dir <dir>] [--json]
Prints the call trace of an operation of the stack running from that state dir, its revert decoded.

       queue-devstack replay <operation id> [--at <block>] [--send] [--expect <state>] [--state-dir <dir>] [--json]
Replays an operation on the chain as it is now (the relayer's checks and simulation, its trace diffed against
the original's); exits 0 as expected, 1 not, 125 when it cannot be judged (git bisect run's skip).

       queue-devstack save <file> [--state-dir <dir>]
Writes a repro bundle of the stack running from that state dir (start it again with --load <file>).

       queue-devstack patch <contract|address> <file.sol|artifact.json>[:Contract] [--state-dir <dir>]
Replaces a contract's code in the stack running from that state dir, its storage kept (docs/patching.md);
queue-devstack patch --undo <contract> puts the deployed code back.

       queue-devstack ctl mine [blocks] | time <seconds> | mining hold|auto | reorg [depth] | drop <op id>
                          | relayer pause|resume|balance <wei> | revert-next [off] | config alternate|original
                          | rpc fail|timeout|drop-logs|unsupported|delay <ms>|ok [--for <ms>] [--methods <m1,m2>] | faults
Dev controls and faults of the stack running from a state dir (--state-dir, default .devstack);
queue-devstack ctl --help says what each does.`;

/** Variables that are no option's. */
const OTHER_VARIABLES: readonly (readonly [string, string])[] = [["DEVSTACK_ORPHAN_GUARD=off", "let anvil outlive this process if it is killed (debugging; found and stopped at the next start)"]];

/** A label and its lines, the lines in one column. */
const entry = (label: string, lines: readonly string[]) => lines.map((line, i) => `  ${(i === 0 ? label : "").padEnd(28)}${line}`).join("\n");

export function helpText(): string {
  const rows: [string, CliOption][] = Object.entries(CLI_OPTIONS);
  const options = rows.flatMap(([name, option]) => (option.help ? [entry(optionLabel(name, option), option.help)] : []));
  const variables = [...rows.flatMap(([, { env }]) => (env ? [[env.name, env.help] as const] : [])), ...OTHER_VARIABLES].map(([name, help]) => entry(name, [help]));
  return `${USAGE}\n\nOptions:\n${options.join("\n")}\n\nEnvironment:\n${variables.join("\n")}\n`;
}
