import { parseArgs } from "node:util";
import { failer, runningStack } from "./running-stack.ts";

// `queue-devstack ctl <control> …`: the dev controls of the stack running from a state dir (its
// /api/dev routes), for trying what a client does when the chain or the relayer misbehaves.
const USAGE = `Usage: queue-devstack ctl <control> [--state-dir <dir>]
  mine [blocks]              mine blocks at once (default 1)
  time <seconds>             move chain time forward and mine a block
  mining hold|auto           hold mining (operations stay submitted) or mine again
  relayer pause|resume       stop or restart the relay engine (accepted operations wait)
  relayer balance <wei>      set the relayer's ETH balance (0: submissions answer 503 relayer_unfunded)
  drop <operation id>        drop the operation's transaction from the mempool (the relayer re-broadcasts it)`;

const fail: (message: string, code: 1 | 2) => never = failer("ctl", USAGE);

let args: { positionals: string[]; stateDir: string };
try {
  const parsed = parseArgs({ args: process.argv.slice(3), options: { "state-dir": { type: "string", default: ".devstack" } }, allowPositionals: true });
  args = { positionals: parsed.positionals, stateDir: parsed.values["state-dir"] };
} catch (error) {
  fail((error as Error).message.split("\n")[0] as string, 2);
}
const [control, a, b] = args.positionals;
const count = (raw: string | undefined, what: string, fallback?: number) => {
  if (raw === undefined && fallback !== undefined) return fallback;
  if (!raw || !/^[1-9][0-9]*$/.test(raw)) fail(`${what} must be a positive integer`, 2);
  return Number(raw);
};
const request = ((): [string, unknown] => {
  if (control === "mine") return ["mine", { blocks: count(a, "blocks", 1) }];
  if (control === "time") return ["time", { seconds: count(a, "seconds") }];
  if (control === "mining" && (a === "hold" || a === "auto")) return ["mining", { mode: a }];
  if (control === "relayer" && (a === "pause" || a === "resume")) return ["relayer", { engine: a === "pause" ? "paused" : "running" }];
  if (control === "drop" && a !== undefined) return ["drop", { operationId: a }];
  if (control === "relayer" && a === "balance" && b !== undefined && /^(0|[1-9][0-9]*)$/.test(b)) return ["relayer", { balanceWei: b }];
  fail(control ? `unknown control: ${args.positionals.join(" ")}` : "which control?", 2);
})();

const info = await runningStack(args.stateDir, fail);
const response = await fetch(`${info.queueUrl}/api/dev/${request[0]}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request[1]) }).catch(() => null);
if (!response) fail(`the stack at ${info.queueUrl} does not answer`, 1);
const text = await response.text();
if (!response.ok) fail(`${response.status}: ${text}`, 1);
process.stdout.write(`${text}\n`);
