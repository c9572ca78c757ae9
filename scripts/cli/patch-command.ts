import path from "node:path";
import { parseArgs } from "node:util";
import { failer, runningStack } from "./running-stack.ts";

// `queue-devstack patch <contract|address> <source> [--state-dir dir]`: replaces a contract's code in the
// stack running from that state dir (POST /api/dev/patch), its storage kept; `--undo <contract>` puts back
// the code the stack started with (a loaded bundle's, then the deployed one). A refusal is one line and
// exit 1; a mistake in the call, exit 2.
const USAGE = `Usage: queue-devstack patch <contract|address> <file.sol|artifact.json|build-info.json>[:Contract] [--state-dir <dir>]
       queue-devstack patch --undo <contract|address> [--state-dir <dir>]
  <contract>: Pool, verifier, registry, directory, an asset's symbol, or an address`;

const fail: (message: string, code: 1 | 2) => never = failer("patch", USAGE);

let parsed: { positionals: string[]; stateDir: string; undo: boolean };
try {
  const { positionals, values } = parseArgs({ args: process.argv.slice(3), options: { "state-dir": { type: "string", default: ".devstack" }, undo: { type: "boolean", default: false }, help: { type: "boolean", short: "h", default: false } }, allowPositionals: true });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  parsed = { positionals, stateDir: values["state-dir"], undo: values.undo };
} catch (error) {
  fail((error as Error).message.split("\n")[0] as string, 2);
}
const [contract, source, ...extra] = parsed.positionals;
if (!contract) fail("which contract? give its name (Pool) or address", 2);
if (parsed.undo ? source !== undefined : source === undefined || extra.length > 0) fail(parsed.undo ? `unexpected argument ${source}` : source === undefined ? "patch it with what? give a .sol file or an artifact" : `unexpected argument ${extra[0]}`, 2);

const info = await runningStack(parsed.stateDir, fail);
// The stack reads the file: a path from here, made absolute (the stack's working folder may be another).
const body = parsed.undo ? { contract } : { contract, source: path.resolve(source as string) };
const response = await fetch(`${info.queueUrl}/api/dev/${parsed.undo ? "unpatch" : "patch"}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).catch(() => null);
if (!response) fail(`the stack at ${info.queueUrl} does not answer`, 1);
const answer = (await response.json().catch(() => ({}))) as { code?: string; detail?: string; name?: string; address?: string; codeHash?: string; previousCodeHash?: string; source?: string };
if (!response.ok) fail(`${answer.code ?? response.status}: ${answer.detail ?? "the stack refused the patch"}`, 1);
process.stdout.write(
  parsed.undo
    ? `unpatched ${answer.name} ${answer.address}: code ${answer.codeHash} again, ${answer.source === "(as deployed)" ? "as deployed" : `as loaded (${answer.source})`} (was ${answer.previousCodeHash})\n`
    : `patched ${answer.name} ${answer.address}: code ${answer.codeHash} from ${answer.source} (was ${answer.previousCodeHash}); storage, address and balance kept\n`,
);
