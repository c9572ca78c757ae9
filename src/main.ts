import { readFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import type { Hex } from "viem";
import { DEFAULT_QUOTE_SETTINGS } from "./quote/quoter.ts";
import { joinNegativeValues } from "./negative-values.ts";
import { printable } from "./printable.ts";
import { redactText } from "./redact.ts";
import { checkTrustProxy, type TrustProxy } from "./client-address.ts";
import { buildQueueRuntime, type RateLimit } from "./server.ts";

/** 127.0.0.0/8, ::1 and localhost: what a default bind may be without --expose. */
function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

// The queue runtime on its own, as an operator runs it: a manifest, an RPC URL and a relayer key.
// Secrets come from the environment only (a command line is visible to every local user in `ps`).
const HELP = `Usage: node --experimental-strip-types src/main.ts --manifest <file> [options]

  --manifest <file>          the deployment manifest (served verbatim by GET /api/queue/config)
  --artifacts <dir>          folder with the proof files the manifest lists (default: the manifest's folder)
  --host <ip>                interface to bind (default 127.0.0.1; any other needs --expose)
  --expose                   allow a non-loopback --host (a warning is printed: put TLS and a proxy in front)
  --trust-proxy <addresses>  the reverse proxies in front, by address or CIDR, comma-separated (127.0.0.1,
                             10.0.0.0/8, loopback): the client they name in X-Forwarded-For is the one the
                             per-client limits count (an IPv6 client by its /64). Without it, behind a proxy
                             every client is the proxy, and one client uses up every client's limits
  --port <port>              port (default 8700)
  --public-rpc-url <url>     RPC URL served to wallets and clients (default: QUEUE_RPC_URL without credentials)
  --explorer-url <url>       block explorer served by /networks (default: none)
  --chain-name <name>        the chain's name served by /networks, as wallets show it (default: Sepolia)
  --cors-origin <origin>     a browser origin allowed to call the queue (repeatable): https://app.example,
                             or "loopback" for any localhost port (default: none, browsers are refused)
  --store <file>             operation store, SQLite (default: queue.sqlite next to the manifest; ":memory:" for none)
  --confirmations <n>        blocks before an operation is confirmed (default 1)
  --stuck-after-ms <ms>      replace a transaction with a fee bump when not mined for this long (default 30000)
  --chain-timeout-ms <ms>    a request's chain reads answer within this, else 503 chain_unavailable (default 3000)
  --rpc-timeout-ms <ms>      timeout of each of the relay engine's own chain calls (default 10000)
  --request-timeout-ms <ms>  a request not received in full within this is a 408 (default 30000)
  --headers-timeout-ms <ms>  headers not received within this are a 408 (default 10000)
  --rate-limit <n>/<s>|off   per client, at most n relays, quotes and finalizes per s seconds: 429 rate_limited
                             (default 60/60)
  --max-in-flight <n>        operations in flight before new ones are 503 queue_full (default 64)
  --max-in-flight-per-client <n>
                             one client's share of them: past it, 429 too_many_in_flight (default 16)
  --max-quotes-per-client <n>
                             unexpired quotes one client may hold: past it, 429 too_many_quotes (default 32)
  --quote-valid-for <s>      how long a quote may be submitted (default 120)
  --quote-settle-within <s>  how long after its quote an action may settle before it is refunded (default 600)
  --quote-slippage-bps <bps> minOutput is the expected output less this, in basis points (default 50)
  --log-level <level>        fatal, error, warn, info (default), debug, trace or silent; JSON lines (pino) on stdout,
                             each with the request id (reqId) or the operation id (operation)

Environment:
  QUEUE_RPC_URL              the chain RPC the runtime uses (required; may carry credentials, never served or logged)
  QUEUE_WS_RPC_URL           the node's WebSocket URL (optional; may carry credentials): new blocks are followed
                             by subscription besides the poll, so operations are seen mined at once
  QUEUE_RELAYER_KEY          the relayer's private key (0x...); its address must match the manifest's relayFees.relayer
`;

const OPTIONS = {
  manifest: { type: "string" },
  artifacts: { type: "string" },
  host: { type: "string", default: "127.0.0.1" },
  port: { type: "string", default: "8700" },
  "public-rpc-url": { type: "string" },
  "explorer-url": { type: "string" },
  "chain-name": { type: "string" },
  "cors-origin": { type: "string", multiple: true },
  store: { type: "string" },
  confirmations: { type: "string" },
  "stuck-after-ms": { type: "string" },
  "chain-timeout-ms": { type: "string" },
  "rpc-timeout-ms": { type: "string" },
  "request-timeout-ms": { type: "string" },
  "headers-timeout-ms": { type: "string" },
  "rate-limit": { type: "string" },
  "max-in-flight": { type: "string" },
  "max-in-flight-per-client": { type: "string" },
  "max-quotes-per-client": { type: "string" },
  "quote-valid-for": { type: "string" },
  "quote-settle-within": { type: "string" },
  "quote-slippage-bps": { type: "string" },
  "log-level": { type: "string", default: "info" },
  expose: { type: "boolean", default: false },
  "trust-proxy": { type: "string" },
  help: { type: "boolean", short: "h", default: false },
} as const;
// An unknown or malformed flag is one line and exit 2, as a shell tool says it, not a stack trace.
const { values } = (() => {
  try {
    return parseArgs({ args: joinNegativeValues(process.argv.slice(2), OPTIONS), options: OPTIONS });
  } catch (error) {
    process.stderr.write(`queue-runtime: ${printable((error as Error).message)} (--help lists them)\n`);
    return process.exit(2);
  }
})();
if (values.help || !values.manifest) {
  process.stdout.write(HELP);
  process.exit(values.help ? 0 : 1);
}
const rpcUrl = process.env.QUEUE_RPC_URL;
if (!rpcUrl) {
  process.stderr.write("queue-runtime: set QUEUE_RPC_URL\n");
  process.exit(1);
}
const relayerKey = process.env.QUEUE_RELAYER_KEY as Hex | undefined;
const usage = (message: string): never => {
  process.stderr.write(`queue-runtime: ${message}\n`);
  process.exit(2);
};
// A number flag is a whole number in its range, or the start stops here: NaN would silently switch a limit off.
const integer = (flag: keyof typeof values, min: number, max: number): number | undefined => {
  const raw = values[flag];
  if (raw === undefined) return undefined;
  const value = typeof raw === "string" && /^[0-9]{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) usage(`--${flag} takes a whole number from ${min} to ${max}`);
  return value;
};
const defined = <T extends object>(entries: T) => Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined)) as Partial<T>;
const DAY_MS = 86_400_000;
const port = integer("port", 0, 65_535) as number;
const relay = defined({
  requiredConfirmations: integer("confirmations", 1, 1_000),
  rpcTimeoutMs: integer("rpc-timeout-ms", 1, DAY_MS),
  maxLiveOperations: integer("max-in-flight", 1, 100_000),
  maxLivePerClient: integer("max-in-flight-per-client", 1, 100_000),
});
// An operator's chain has 12-second blocks: don't outbid a transaction that is merely waiting.
const stuckAfterMs = integer("stuck-after-ms", 1, DAY_MS) ?? 30_000;
const quotes = defined({
  maxLivePerClient: integer("max-quotes-per-client", 1, 100_000),
  validForSeconds: integer("quote-valid-for", 1, 86_400),
  settleWithinSeconds: integer("quote-settle-within", 1, 30 * 86_400),
  slippageBps: integer("quote-slippage-bps", 0, 10_000),
});
// An action quoted at the last second of its quote must still have time to settle.
const quoteTerms = { ...DEFAULT_QUOTE_SETTINGS, ...quotes };
if (quoteTerms.settleWithinSeconds <= quoteTerms.validForSeconds) usage("--quote-settle-within must be longer than --quote-valid-for");
const timeouts = defined({
  chainTimeoutMs: integer("chain-timeout-ms", 1, DAY_MS),
  requestTimeoutMs: integer("request-timeout-ms", 1, DAY_MS),
  headersTimeoutMs: integer("headers-timeout-ms", 1, DAY_MS),
});
const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];
if (!LOG_LEVELS.includes(values["log-level"])) usage(`--log-level must be one of ${LOG_LEVELS.join(", ")}`);
const rateLimit = ((): RateLimit | false | undefined => {
  const raw = values["rate-limit"];
  if (raw === undefined) return undefined;
  if (raw === "off") return false;
  const match = /^([1-9][0-9]{0,6})\/([1-9][0-9]{0,5})$/.exec(raw);
  if (!match) return usage("--rate-limit takes <requests>/<seconds> (60/60), or off");
  return { max: Number(match[1]), timeWindowMs: Number(match[2]) * 1000 };
})();
const trustProxy = ((): TrustProxy | undefined => {
  const raw = values["trust-proxy"];
  if (raw === undefined) return undefined;
  try {
    return checkTrustProxy(raw.split(",").map((entry) => entry.trim()));
  } catch (error) {
    return usage(`--trust-proxy: ${printable((error as Error).message)}`);
  }
})();
if (!isLoopback(values.host)) {
  if (!values.expose) usage(`--host ${values.host} is not a loopback address: pass --expose to bind it`);
  process.stderr.write(`queue-runtime: WARNING: listening on ${values.host}, reachable from other machines; this runtime relays with a funded key: put TLS, and limits of your own, in front${trustProxy === undefined ? " (behind a proxy, name it with --trust-proxy, or every client shares its limits)" : ""}\n`);
}

try {
  const app = await buildQueueRuntime({
    manifest: await readFile(values.manifest),
    artifactsDir: values.artifacts ?? path.dirname(values.manifest),
    rpcUrl,
    ...(process.env.QUEUE_WS_RPC_URL ? { wsRpcUrl: process.env.QUEUE_WS_RPC_URL } : {}),
    publicRpcUrl: values["public-rpc-url"],
    explorerUrl: values["explorer-url"] ?? null,
    ...(values["chain-name"] ? { chainName: values["chain-name"] } : {}),
    ...(values["cors-origin"] ? { corsOrigins: values["cors-origin"] } : {}),
    relayerPrivateKey: relayerKey || undefined,
    store: values.store ?? path.join(path.dirname(values.manifest), "queue.sqlite"),
    relay: { ...relay, stuckAfterMs },
    quotes,
    ...timeouts,
    ...(rateLimit === undefined ? {} : { rateLimit }),
    ...(trustProxy === undefined ? {} : { trustProxy }),
    logger: { level: values["log-level"], redact: ["req.headers.authorization"] },
  });
  const stop = async () => {
    await app.close();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  await app.listen({ host: values.host, port });
} catch (error) {
  process.stderr.write(`queue-runtime: ${(error as Error).name}: ${redactText((error as Error).message, rpcUrl)}\n`);
  process.exit(1);
}
