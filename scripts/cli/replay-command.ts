import { parseArgs } from "node:util";
import { runningStack } from "./running-stack.ts";
import { OPERATION_STATES } from "../../src/schemas/operation-states.ts";
import { joinNegativeValues } from "../../src/negative-values.ts";
import { printable } from "../../src/printable.ts";

// `queue-devstack replay <operation id> [--at <block>] [--send] [--expect <state>] …`: an operation of the
// stack running from a state dir, replayed on its chain as it is now (its dev route). The exit code is
// what `git bisect run` reads: 0 as expected, 1 not, 125 when it cannot be judged (a mistake in the
// call too: bisect then skips rather than calls a commit bad).
const USAGE = `Usage: queue-devstack replay <operation id> [--at <block>] [--send] [--expect <state>] [--wait <ms>] [--state-dir <dir>] [--json]
  --at <block>       replay on the state of this block (default: the head)
  --send             relay it for real, as a new operation linked to the original, and wait for it to end
  --expect <state>   the state that counts as success: accepted (the default) or rejected; with --send, any
                     operation state (default confirmed)
  --wait <ms>        with --send, how long to wait for it to end (default 60000)
  --json             the whole answer as one JSON line
Exit: 0 as expected, 1 not, 125 when it cannot be judged (git bisect run's skip).`;
const CANNOT_JUDGE = 125;

const fail: (message: string, usage?: boolean) => never = (message, usage = false) => {
  // A message may quote the stack's answers (an operation's failure, a loaded bundle's text): escaped.
  process.stderr.write(`queue-devstack replay: ${printable(message)}\n${usage ? `${USAGE}\n` : ""}`);
  process.exit(CANNOT_JUDGE);
};
if (process.argv.slice(3).some((arg) => arg === "--help" || arg === "-h")) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

let parsed: ReturnType<typeof parse>;
function parse() {
  const options = { "state-dir": { type: "string", default: ".devstack" }, at: { type: "string" }, send: { type: "boolean", default: false }, expect: { type: "string" }, wait: { type: "string" }, json: { type: "boolean", default: false } } as const;
  return parseArgs({ args: joinNegativeValues(process.argv.slice(3), options), options, allowPositionals: true });
}
try {
  parsed = parse();
} catch (error) {
  fail((error as Error).message.split("\n")[0] as string, true);
}
const { values } = parsed;
const [id, ...extra] = parsed.positionals;
if (!id || extra.length > 0) fail(id ? `unexpected argument ${extra[0]}` : "which operation? give its id (op_…)", true);
const integer = (raw: string | undefined, what: string) => {
  if (raw === undefined) return undefined;
  if (!/^(0|[1-9][0-9]{0,15})$/.test(raw)) fail(`${what} must be a non-negative integer`, true);
  return Number(raw);
};
const expected = values.expect;
if (expected !== undefined && !(OPERATION_STATES as readonly string[]).includes(expected)) fail(`--expect must be an operation state: ${OPERATION_STATES.join(", ")}`, true);
const body = { at: integer(values.at, "--at"), send: values.send || undefined, expect: expected, waitMs: integer(values.wait, "--wait") };

const info = await runningStack(values["state-dir"], (message) => fail(message));
const response = await fetch(`${info.queueUrl}/api/dev/operations/${encodeURIComponent(id)}/replay`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
}).catch(() => null);
if (!response) fail(`the stack at ${info.queueUrl} does not answer`);
const text = await response.text();
if (!response.ok) {
  let problem: { code?: string; detail?: string } = {};
  try {
    problem = JSON.parse(text) as typeof problem;
  } catch {}
  fail(`${response.status} ${problem.code ?? ""}: ${problem.detail ?? text}`);
}
const answer = JSON.parse(text) as { text: string; verdict: { exitCode: number } };
// The answer's text is escaped line by line; JSON escapes C0 controls, not DEL or C1.
process.stdout.write(values.json ? `${printable(text)}\n` : `${answer.text}\n`);
process.exit(answer.verdict.exitCode);
