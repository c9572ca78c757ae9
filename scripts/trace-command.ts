import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import type { Hex } from "viem";
import { loadFixtures } from "../harness/deployment/index.ts";
import { failer, runningStack } from "./running-stack.ts";
import { traceOf } from "../harness/trace/index.ts";
import { parseManifest } from "../src/server.ts";
import { printable } from "../src/printable.ts";

// `queue-devstack trace <operation id> [--state-dir dir] [--json]`: the call trace of an operation of the
// stack running from that state dir, its revert decoded. Exit 2 on a usage mistake, 1 when it cannot.
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
const config = parseManifest(await readFile(info.manifestPath));
let op: { state: string; transactionHash: Hex | null; reason: { code: string; detail: string } | null } | undefined;
for (const status of ["withdraw-status", "send-status"]) {
  const response = await fetch(`${info.queueUrl}/api/queue/${status}?id=${encodeURIComponent(id)}`).catch(() => undefined);
  if (response?.ok) {
    op = (await response.json()) as typeof op;
    break;
  }
}
if (!op) fail(`the stack at ${info.queueUrl} has no operation ${id}`, 1);
if (!op.transactionHash) {
  fail(`operation ${id} was never mined (${op.state}${op.reason ? `: ${op.reason.code}, ${op.reason.detail}` : ""}); stack.trace(id) replays it from the harness API`, 1);
}
let trace: Awaited<ReturnType<typeof traceOf>>;
try {
  trace = await traceOf({ rpcUrl: info.rpcUrl, config, fixtures: await loadFixtures(), transactionHash: op.transactionHash });
} catch (error) {
  // The node's refusal (a node without debug_traceTransaction, a chain gone): one line, not a stack trace.
  fail(`the node at ${info.rpcUrl} could not trace transaction ${op.transactionHash}: ${((error as { shortMessage?: string }).shortMessage ?? (error as Error).message).split("\n")[0]}`, 1);
}
// What the chain said is shown escaped (trace.text is, line by line; JSON escapes C0 controls, not DEL or C1).
process.stdout.write(parsed.values.json ? `${printable(JSON.stringify(trace))}\n` : `${printable(`operation ${id} (${op.state}), transaction ${trace.transactionHash}`)}\n${trace.text}\n`);
