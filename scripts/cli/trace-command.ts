import { parseArgs } from "node:util";
import { failer, runningStack } from "./running-stack.ts";
import { printable } from "../../src/printable.ts";

// `queue-devstack trace <operation id> [--state-dir dir] [--json]`: the call trace of an operation of the
// stack running from that state dir, its revert decoded: what stack.trace gives, asked of the stack (its
// dev route), so a refusal the stack kept or an operation rejected before broadcast is traced as its call
// on the block it failed at. Exit 2 on a usage mistake, 1 when it cannot.
const USAGE = "Usage: queue-devstack trace <operation id> [--state-dir <dir>] [--json]";

const fail: (message: string, code: 1 | 2) => never = failer("trace", USAGE);

let parsed: ReturnType<typeof parseArgs<{ options: { "state-dir": { type: "string"; default: string }; json: { type: "boolean"; default: false } }; allowPositionals: true }>>;
try {
  parsed = parseArgs({ args: process.argv.slice(3), options: { "state-dir": { type: "string", default: ".devstack" }, json: { type: "boolean", default: false } }, allowPositionals: true });
} catch (error) {
  fail((error as Error).message.split("\n")[0] as string, 2);
}
const [id, ...extra] = parsed.positionals;
if (!id || extra.length > 0) fail(id ? `unexpected argument ${extra[0]}` : "which operation? give its id (op_…)", 2);
const stateDir = parsed.values["state-dir"];

const info = await runningStack(stateDir, fail);
/** A GET of the stack's, as JSON; a problem is one line (its code and detail), a stack that does not answer too. */
async function ask<T>(route: string): Promise<{ ok: true; body: T } | { ok: false; status: number; code: string; detail: string }> {
  const response = await fetch(`${info.queueUrl}${route}`).catch(() => fail(`the stack at ${info.queueUrl} did not answer: is it running?`, 1));
  const body = (await response.json().catch(() => ({}))) as T & { code?: string; detail?: string };
  return response.ok ? { ok: true, body } : { ok: false, status: response.status, code: String(body.code ?? response.status), detail: String(body.detail ?? response.statusText) };
}
const query = `id=${encodeURIComponent(id)}`;
let op: { state: string; reason: { code: string; detail: string } | null } | undefined;
for (const status of ["withdraw-status", "send-status"]) {
  const answer = await ask<NonNullable<typeof op>>(`/api/queue/${status}?${query}`);
  if (answer.ok) {
    op = answer.body;
    break;
  }
}
if (op === undefined) fail(`the stack at ${info.queueUrl} has no operation ${id}`, 1);
const traced = await ask<{ transactionHash: string | null; block: number | null; text: string }>(`/api/dev/trace?${query}`);
if (!traced.ok) fail(`${traced.code}: ${traced.detail}`, 1);
const trace = traced.body;
const what = trace.transactionHash ? `transaction ${trace.transactionHash}` : `never mined: its call on the state of block ${trace.block}`;
// What the chain said is shown escaped (trace.text is, line by line; JSON escapes C0 controls, not DEL or C1).
const failed = op.reason ? `${printable(`failed: ${op.reason.code}: ${op.reason.detail}`)}\n` : "";
process.stdout.write(parsed.values.json ? `${printable(JSON.stringify(trace))}\n` : `${printable(`operation ${id} (${op.state}), ${what}`)}\n${failed}${trace.text}\n`);
