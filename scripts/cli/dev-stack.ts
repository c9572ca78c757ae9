#!/usr/bin/env node
import { parseArgs } from "node:util";
import type { DevStack, SeedResult } from "../../harness/index.ts";
import { joinNegativeValues } from "../../src/negative-values.ts";
import { printable, printableJsonLine } from "../../src/printable.ts";
import { redactText } from "../../src/redact.ts";
import { helpText } from "./help.ts";
import { fromEnvironment, parseArgsOptions } from "./options.ts";

/** A mistake in how the command was called: one line, the hint, exit code 2. */
function usageError(message: string): never {
  process.stderr.write(`queue-devstack: ${message}\nRun with --help for the options.\n`);
  process.exit(2);
}

// `exec [options] -- <command> [args…]`: the stack's options before the --, the command after it.
const execMode = process.argv[2] === "exec";
let stackArgs = process.argv.slice(2);
let command: string[] = [];
if (execMode) {
  const rest = process.argv.slice(3);
  const separator = rest.indexOf("--");
  if (separator < 0 || separator === rest.length - 1) usageError("exec needs a command after --: queue-devstack exec [options] -- <command> [args…]");
  [stackArgs, command] = [rest.slice(0, separator), rest.slice(separator + 1)];
}

function parseCommandLine() {
  try {
    const options = parseArgsOptions(execMode);
    return parseArgs({
      args: joinNegativeValues(stackArgs, options),
      options,
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    // parseArgs's messages are long and speak of its own API; say what was wrong, in one line.
    const { code, message } = error as { code?: string; message: string };
    const named = /'([^']+)'/.exec(message)?.[1] ?? "";
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") usageError(`unknown option ${named}`);
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") usageError(`${named.split(" ")[0] || "an option"} needs a value`);
    if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") usageError(`unexpected argument ${named}`);
    usageError(message.split("\n")[0] as string);
  }
}

// Sub-commands work on a stack that is already running (its state dir).
const SUBCOMMANDS: Record<string, () => Promise<unknown>> = {
  trace: () => import("./trace-command.ts"),
  save: () => import("./save-command.ts"),
  ctl: () => import("./ctl-command.ts"),
  patch: () => import("./patch-command.ts"),
  replay: () => import("./replay-command.ts"),
};
const subcommand = SUBCOMMANDS[process.argv[2] ?? ""];
if (subcommand) {
  await subcommand();
  process.exit(process.exitCode ?? 0);
}

const { values } = parseCommandLine();
if (values.help) {
  process.stdout.write(helpText());
  process.exit(0);
}

/** A whole-number option: one message, naming its range, whatever is wrong with the value. */
function integer(name: string, raw: string | undefined, { min = 0n, max }: { min?: bigint; max?: bigint } = {}): bigint | undefined {
  if (raw === undefined) return undefined;
  const value = /^\d+$/.test(raw) ? BigInt(raw) : undefined;
  if (value === undefined || value < min || (max !== undefined && value > max)) {
    usageError(`--${name} must be an integer ${max === undefined ? `of at least ${min}` : `from ${min} to ${max}`}, got "${raw}"`);
  }
  return value;
}

const port = (name: string, raw: string) => Number(integer(name, raw, { max: 65535n }));

if (values.runs !== undefined && !execMode) usageError("--runs is an exec option: queue-devstack exec --runs <n> -- <command>");
if (values.json && execMode) usageError("--json is not an exec option: the command gets the stack in its environment");
const runs = Number(integer("runs", values.runs, { min: 1n }) ?? 1);
// A command that cannot run is refused before a stack is started for it, as a shell would: 127 or 126.
if (execMode) {
  const { findCommand } = await import("../../harness/exec/index.ts");
  const found = findCommand(command[0] as string);
  if ("reason" in found) {
    process.stderr.write(`queue-devstack exec: ${found.reason}\n`);
    process.exit(found.exitCode);
  }
}

const chainPort = port("chain-port", values["chain-port"]);
const queuePort = port("queue-port", values["queue-port"]);
const forkUrl = values["fork-url"] ?? fromEnvironment("fork-url");
const forkBlockNumber = integer("fork-block-number", values["fork-block-number"]);
const deploymentBlock = integer("deployment-block", values["deployment-block"]);
// --seed's checks load only the seed folder's door (its scenario runs later, with the harness).
const { checkScenario, SEED_CONFIRMATIONS } = values.seed === undefined ? { checkScenario: undefined, SEED_CONFIRMATIONS: 1 } : await import("../../harness/seed/index.ts");
if (values.seed !== undefined && checkScenario) {
  try {
    checkScenario(values.seed);
  } catch (error) {
    usageError(`--seed: ${(error as Error).message}`);
  }
  if (execMode) usageError("--seed is not an exec option: seed the stack in the command's own set-up (seed(stack, name))");
  if (values.load !== undefined || values.pool !== undefined) usageError(`--seed makes its scenario on the fixtures' deployment: not with ${values.load !== undefined ? "--load" : "--pool"}`);
}
// A seeded stack's included operation stays so only while it lacks a confirmation.
const confirmations = Number(integer("confirmations", values.confirmations ?? String(SEED_CONFIRMATIONS), { min: 1n }));
if (values.seed !== undefined && confirmations < SEED_CONFIRMATIONS) usageError(`--seed ${values.seed} shows an included operation: it needs --confirmations ${SEED_CONFIRMATIONS} or more`);
// The harness (viem, fastify, zod: over a second of loading) only now: --help and a mistake in the
// command line answer at once.
const [{ formatEther }, { PortInUseError, seed, startDevStack }, { anvilIndexOf, jsonRpc }, { checkAllowedHosts }, { STACK_URLS }, { shellCommandLine, signalExitCode }, { settleMemoryAfterStart, watchLaunch }, { checkCorsOrigins }, { ExecRuns }] = await Promise.all([
  import("viem"),
  import("../../harness/index.ts"),
  import("../../harness/chain/index.ts"),
  import("../../harness/dev/index.ts"),
  import("../../harness/stack-info/index.ts"),
  import("../../harness/exec/index.ts"),
  import("../../harness/process/index.ts"),
  import("../../src/cors.ts"),
  import("./exec-command.ts"),
]);
const corsOrigins = ["loopback", ...(values["cors-origin"] ?? [])];
try {
  checkCorsOrigins(corsOrigins);
} catch (error) {
  usageError(`--cors-origin: ${(error as Error).message}`);
}
const allowedHosts = values["allowed-host"] ?? [];
try {
  checkAllowedHosts(allowedHosts);
} catch (error) {
  usageError(`--allowed-host: ${(error as Error).message}`);
}

// Progress and the summary go to stderr under --json, so stdout carries exactly one JSON line; under
// exec, stdout is the command's.
const out = values.json || execMode ? process.stderr : process.stdout;
const exec = execMode ? new ExecRuns(command, runs, process.stderr) : undefined;

let stack: DevStack | undefined;
let starting: Promise<DevStack> | undefined;
let stopping = false;
// A signal during start-up gives the start up: the step under way stops (a bundle's unpacking, anvil's
// start), what started is stopped and the state dir (a temp one under exec) left as it was found.
const startUp = new AbortController();
async function shutdown(signal: NodeJS.Signals, why: string = signal): Promise<void> {
  // Under exec, a running command gets the signal; its end stops the stack.
  if (exec?.forward(signal)) return;
  if (stopping) return;
  stopping = true;
  out.write(`\n${why}: stopping the stack...\n`);
  startUp.abort(); // nothing once the stack has started: it is stopped below
  await (stack ?? (await starting?.catch(() => undefined)))?.stop();
  out.write("stopped.\n");
  process.exit(exec ? signalExitCode(signal) : 0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGHUP", () => void shutdown("SIGHUP"));
// A signal to the launch (npm, npx, its sh) stops the stack too, though npm's sh keeps SIGINT to itself
// and dies of SIGTERM: when our parent goes, we go too, with our anvil.
watchLaunch((signal, why) => void shutdown(signal, why));

/** Why the start failed, in the CLI's words: a port in use says which, and what to do. */
function startFailure(error: Error & { code?: string }, forkUrl: string | undefined): string {
  // Both ports are checked before anything starts; one taken after the check fails where it is bound:
  // the queue runtime's listen() with EADDRINUSE, anvil in its own words.
  if (error instanceof PortInUseError) {
    const flag = error.role === "chain" ? "--chain-port" : "--queue-port";
    return `port ${error.port} (${flag}) is in use: stop what holds it (another stack?), or pass ${flag} 0 for any free port`;
  }
  if (error.code === "EADDRINUSE") {
    return `port ${queuePort} (--queue-port) is in use: stop what holds it (another stack?), or pass --queue-port 0 for any free port`;
  }
  if (/Address already in use/i.test(error.message)) {
    return `port ${chainPort} (--chain-port) is in use: stop what holds it (another stack?), or pass --chain-port 0 for any free port`;
  }
  return `${error.name}: ${redactText(error.message, forkUrl)}`;
}
if (!/^(127\.\d+\.\d+\.\d+|::1|localhost)$/.test(values.host)) {
  // anvil's dev keys are public: anyone who reaches this chain can spend from the dev accounts.
  process.stderr.write(`queue-devstack: WARNING: --host ${values.host} makes anvil and the queue reachable from other machines; both serve dev accounts whose keys are public\n`);
}
try {
  stack = await (starting = startDevStack({
    host: values.host,
    chainPort,
    queuePort,
    ...(values["state-dir"] === undefined ? {} : { stateDir: values["state-dir"] }),
    persist: values.persist,
    ...(values.load ? { load: values.load } : {}),
    ...(values.patch ? { patch: values.patch } : {}),
    forkUrl,
    forkBlockNumber,
    ...(values["fork-cache"] ? { forkCacheDir: values["fork-cache"] } : {}),
    pool: values.pool,
    deploymentBlock,
    ...(values.proofs === undefined ? {} : { proofs: values.proofs as "groth16" | "dev" }),
    // Request logs go where progress goes: under --json, stdout carries the one JSON line only.
    // Each line escaped for the terminal (a revert's text or a header may come from a loaded bundle).
    logger: values.verbose ? { level: "debug", stream: { write: (line: string) => out.write(printableJsonLine(line)) } } : false,
    relay: { requiredConfirmations: confirmations },
    corsOrigins,
    allowedHosts,
    // Steps that end after a signal are being undone: not printed.
    onProgress: ({ step, detail, ms }) => stopping || out.write(`  ${step.padEnd(22)} ${`${ms.toFixed(0)} ms`.padStart(8)}${detail ? `  ${printable(detail)}` : ""}\n`),
    signal: startUp.signal,
  }));
} catch (error) {
  // Given up by a signal: shutdown() ends the process, as for any interrupt.
  if (startUp.signal.aborted && error === startUp.signal.reason) await new Promise(() => {});
  // A bundle, a chain or an upstream may have put text in the message: shown, never run by the terminal.
  process.stderr.write(`queue-devstack: ${printable(startFailure(error as Error, forkUrl))}\n`);
  process.exit(1);
}

if (stopping) await new Promise(() => {}); // a signal arrived during start-up; shutdown() exits

const s = stack;
// Seeded before the ready line: ready means the scenario is there to render.
let seeded: SeedResult | undefined;
if (values.seed !== undefined) {
  try {
    seeded = await seed(s, values.seed);
    out.write(`  ${`seed ${values.seed}`.padEnd(22)} ${`${seeded.ms} ms`.padStart(8)}  one operation per state; relayer paused, mining held\n`);
  } catch (error) {
    process.stderr.write(`queue-devstack: ${printable(`${(error as Error).name}: ${(error as Error).message}`)}\n`);
    stopping = true;
    await s.stop();
    process.exit(1);
  }
}
if (exec) {
  out.write(`queue-devstack exec: stack ready in ${(performance.now() / 1000).toFixed(2)} s (queue ${s.queueUrl}, RPC ${s.rpcUrl}${s.proofs === "dev" ? ", dev proofs" : ""}); running ${shellCommandLine(command)}\n`);
  let exitCode: number;
  try {
    exitCode = await exec.run(s);
  } catch (error) {
    process.stderr.write(`queue-devstack exec: ${(error as Error).message}\n`);
    exitCode = 1;
  }
  stopping = true;
  await s.stop();
  process.exit(exitCode);
}
// The ready line first: the summary below (on stderr under --json) waits for two balance reads.
if (values.json) process.stdout.write(`${JSON.stringify(s.info)}\n`);
// Every dev account starts with anvil's 10000 ETH, and the deployer has since paid the fixtures' gas
// (in the genesis, or live on a fork): the figure for all is another account's, the deployer's its own.
// By node:http (jsonRpc): fetch would load undici and its parser into an idle stack's memory.
const etherOf = (address: string | undefined) =>
  jsonRpc<string>(s.rpcUrl, "eth_getBalance", [address, "latest"])
    .then((balance) => BigInt(balance))
    .catch(() => undefined);
const [each, deployer] = await Promise.all([etherOf(s.accounts[1]?.address), etherOf(s.accounts[0]?.address)]);
const balance = each === undefined ? "?" : `${formatEther(each)} ETH`;
const deployerPaid = deployer !== undefined && deployer !== each ? `, ${Number(formatEther(deployer)).toFixed(2)} ETH left after paying their gas` : "";

// The summary shows what a bundle, a chain or an upstream says (asset symbols...): each line printable.
const summary = `
queue-devstack ready in ${(performance.now() / 1000).toFixed(2)} s (since the process started)
${s.proofs === "dev" ? "  DEV PROOFS      the Pool's verifier is DevVerifier: proofs are checked for their public inputs only, never proved\n" : ""}  mode            ${s.mode}${s.fork ? ` (${s.fork.displayUrl} at block ${s.fork.blockNumber}, ${s.fork.blockHash})` : ""}
  chain id        ${s.manifest.chainId}
  Pool            ${s.manifest.poolAddress} (${s.info.pool}, block ${s.manifest.deploymentBlock})
${s.patches().map((p) => `  PATCHED         ${p.name} ${p.address}: code ${p.codeHash} from ${p.source}\n`).join("")}  assets          ${s.manifest.assets.map((a) => `${a.symbol} ${a.address}`).join(", ")}
  manifest        ${s.manifestPath}
  stack info      ${s.stackInfoPath}
${STACK_URLS.map(({ key, label, note }) => `  ${label.padEnd(16)}${s.info[key]}${note ? `  (${note})` : ""}`).join("\n")}
  relayer         ${s.relayer.address}  (anvil's dev account #1: sending from it takes the relayer's nonce)
${seeded ? `  SEEDED          ${values.seed}: ${Object.entries(seeded.operations).map(([state, op]) => `${state} ${op.id}`).join(", ")}; a swap awaiting finalize ${seeded.reservation.operationId}; shielded notes on accounts ${seeded.accounts.map((a) => `#${a.index}`).join(" and ")}. The relayer is paused and mining held: ctl relayer resume, ctl mining auto let them proceed\n` : ""}
Funded dev accounts (${balance} each, plus 1,000,000 of each asset on a fresh chain), numbered as in stack.json
and exec's QUEUE_DEVSTACK_ACCOUNT_<i>_*: the relayer (anvil's #1) is not among them, so #1 here is anvil's #2.
DEV ONLY: these are anvil's publicly known test keys. Never send real funds to them.
${s.info.devAccounts.map((a, i) => `  ${`#${i}`.padStart(3)} (anvil #${anvilIndexOf(i)})  ${a.address}  ${a.privateKey}${a.role === "deployer" ? `  (deployed the fixtures${deployerPaid})` : ""}`).join("\n")}

Ctrl-C stops everything.
`;
out.write(summary.split("\n").map(printable).join("\n"));
// Started, the stack mostly waits: give back what the start grew (issue 32, item 5).
settleMemoryAfterStart();
