import { parseArgs } from "node:util";
import { failer, runningStack } from "./running-stack.ts";
import { joinNegativeValues } from "../../src/negative-values.ts";
import { printable } from "../../src/printable.ts";
import { controlWords, problemWords } from "./ctl-words.ts";

// `queue-devstack ctl <control> …`: the dev controls of the stack running from a state dir (its
// /api/dev routes), for trying what a client does when the chain or the relayer misbehaves.
const USAGE = `Usage: queue-devstack ctl <control> [--state-dir <dir>] [--json]
  mine [blocks]              mine blocks at once (default 1)
  time <seconds>             move chain time forward and mine a block
  mining hold|auto           hold mining (operations stay submitted) or mine again
  relayer pause|resume       stop or restart the relay engine (accepted operations wait)
  relayer balance <wei>      set the relayer's ETH balance (0: submissions answer 503 relayer_unfunded)
  drop <operation id>        drop the operation's transaction from the mempool (the relayer re-broadcasts it)
  reorg [depth]              replace the last blocks (default 1); their transactions are sent again
  rpc fail|timeout|drop-logs the runtime's RPC fails (503), never answers, or loses logs
  rpc unsupported            the runtime's RPC lacks the --methods given (JSON-RPC error -32601)
  rpc delay <ms>             the runtime's RPC answers late
  rpc ok                     the runtime's RPC behaves again
      [--for <ms>]             the fault ends by itself
      [--methods <m1,m2>]      only these JSON-RPC methods misbehave
  revert-next [off]          the next relay is mined and reverts (InvalidProof); off disarms
  faults                     the faults switched on
  config alternate|original  serve another deployment from the queue URL (a new Pool), or the original
  reset                      back to the clean state the stack started in (chain, operations, faults, configuration)
  --json                     print the dev route's JSON answer (or problem) as it came, for scripts`;

const fail: (message: string, code: 1 | 2) => never = failer("ctl", USAGE);
if (process.argv.slice(3).some((arg) => arg === "--help" || arg === "-h")) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

let args: { positionals: string[]; stateDir: string; for: string | undefined; methods: string | undefined; json: boolean };
try {
  const options = { "state-dir": { type: "string", default: ".devstack" }, for: { type: "string" }, methods: { type: "string" }, json: { type: "boolean", default: false } } as const;
  const parsed = parseArgs({ args: joinNegativeValues(process.argv.slice(3), options), options, allowPositionals: true });
  args = { positionals: parsed.positionals, stateDir: parsed.values["state-dir"], for: parsed.values.for, methods: parsed.values.methods, json: parsed.values.json };
} catch (error) {
  // A negative count (mine -1) reads as an unknown option to parseArgs: it is a count, not 1 or more.
  const named = /'(-[0-9][^']*)'/.exec((error as Error).message)?.[1];
  if ((error as { code?: string }).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && named !== undefined) fail(`${named} is not a positive integer: mine, time, reorg and rpc delay take a count of 1 or more`, 2);
  fail((error as Error).message.split("\n")[0] as string, 2);
}
const [control, a, b] = args.positionals;
const count = (raw: string | undefined, what: string, fallback?: number) => {
  if (raw === undefined && fallback !== undefined) return fallback;
  if (!raw || !/^[1-9][0-9]*$/.test(raw)) fail(`${what} must be a positive integer${raw === undefined ? "" : `, got "${raw}"`}`, 2);
  return Number(raw);
};
const faultOptions = () => ({
  ...(args.for === undefined ? {} : { forMs: count(args.for, "--for") }),
  ...(args.methods === undefined ? {} : { methods: args.methods.split(",").filter(Boolean) }),
});
const request = ((): [string, unknown] => {
  if (control === "mine") return ["mine", { blocks: count(a, "blocks", 1) }];
  if (control === "time") return ["time", { seconds: count(a, "seconds") }];
  if (control === "mining" && (a === "hold" || a === "auto")) return ["mining", { mode: a }];
  if (control === "relayer" && (a === "pause" || a === "resume")) return ["relayer", { engine: a === "pause" ? "paused" : "running" }];
  if (control === "reorg" && b === undefined) return ["reorg", { depth: count(a, "depth", 1) }];
  if (control === "drop" && a !== undefined) return ["drop", { operationId: a }];
  if (control === "relayer" && a === "balance" && b !== undefined && /^(0|[1-9][0-9]*)$/.test(b)) return ["relayer", { balanceWei: b }];
  if (control === "rpc" && a === "unsupported" && args.methods === undefined) fail("rpc unsupported needs --methods <m1,m2>: the methods the node lacks", 2);
  if (control === "rpc" && (a === "fail" || a === "timeout" || a === "drop-logs" || a === "unsupported")) return ["rpc", { fault: a, ...faultOptions() }];
  if (control === "rpc" && a === "delay") return ["rpc", { fault: "delay", delayMs: count(b, "delay (ms)"), ...faultOptions() }];
  if (control === "rpc" && a === "ok") return ["rpc", { fault: "none" }];
  if (control === "revert-next" && (a === undefined || a === "off")) return ["revert-next", { armed: a !== "off" }];
  if (control === "faults" && a === undefined) return ["faults", null];
  if (control === "config" && (a === "alternate" || a === "original")) return ["config", { serve: a }];
  if (control === "reset" && a === undefined) return ["reset", {}];
  fail(control ? `unknown control: ${args.positionals.join(" ")}` : "which control?", 2);
})();

const info = await runningStack(args.stateDir, fail);
const response = await fetch(
  `${info.queueUrl}/api/dev/${request[0]}`,
  request[1] === null ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request[1]) },
).catch(() => null);
if (!response) fail(`the stack at ${info.queueUrl} does not answer`, 1);
const text = await response.text();
if (!response.ok) fail(args.json ? `${response.status}: ${text}` : problemWords(response.status, text), 1);
// JSON escapes C0 controls, not DEL or C1: printable escapes those.
process.stdout.write(`${args.json ? printable(text) : await controlWords(request[0], (request[1] ?? {}) as Record<string, unknown>, JSON.parse(text))}\n`);
