import { parseArgs } from "node:util";
import { writeFileAtomic } from "../../harness/files/index.ts";
import { failer, runningStack } from "./running-stack.ts";

// `queue-devstack save <file> [--state-dir dir]`: a repro bundle of the stack running from that state
// dir (its dev route), written atomically; `queue-devstack --load <file>` starts from it.
const USAGE = "Usage: queue-devstack save <file> [--state-dir <dir>]";

const fail: (message: string, code: 1 | 2) => never = failer("save", USAGE);

let parsed: { positionals: string[]; stateDir: string };
try {
  const p = parseArgs({ args: process.argv.slice(3), options: { "state-dir": { type: "string", default: ".devstack" } }, allowPositionals: true });
  parsed = { positionals: p.positionals, stateDir: p.values["state-dir"] };
} catch (error) {
  fail((error as Error).message.split("\n")[0] as string, 2);
}
const [file, ...extra] = parsed.positionals;
if (!file || extra.length > 0) fail(file ? `unexpected argument ${extra[0]}` : "where to? give a file name", 2);

const info = await runningStack(parsed.stateDir, fail);
const response = await fetch(`${info.queueUrl}/api/dev/bundle`).catch(() => null);
if (!response) fail(`the stack at ${info.queueUrl} does not answer`, 1);
if (!response.ok) fail(`${response.status}: ${await response.text()}`, 1);
const bytes = Buffer.from(await response.arrayBuffer());
await writeFileAtomic(file, bytes, { makeFolder: false }).catch((error: Error) => fail(`cannot write ${file}: ${error.message}`, 1));
process.stdout.write(`saved ${file} (${bytes.length} bytes): start it again with queue-devstack --load ${file} --state-dir <an empty dir>\n`);
