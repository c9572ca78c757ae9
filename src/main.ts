import { readFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import type { Hex } from "viem";
import { redactText } from "./redact.ts";
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
  --log-level <level>        fatal, error, warn, info (default), debug, trace or silent; JSON lines (pino) on stdout,
                             each with the request id (reqId) or the operation id (operation)

Environment:
  QUEUE_RPC_URL              the chain RPC the runtime uses (required; may carry credentials, never served or logged)
  QUEUE_WS_RPC_URL           the node's WebSocket URL (optional; may carry credentials): new blocks are followed
                             by subscription besides the poll, so operations are seen mined at once
  QUEUE_RELAYER_KEY          the relayer's private key (0x...); its address must match the manifest's relayFees.relayer
`;

const { values } = parseArgs({
  options: {
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
    "log-level": { type: "string", default: "info" },
    expose: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
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
if (!isLoopback(values.host)) {
  if (!values.expose) usage(`--host ${values.host} is not a loopback address: pass --expose to bind it`);
  process.stderr.write(`queue-runtime: WARNING: listening on ${values.host}, reachable from other machines; this runtime relays with a funded key: put TLS, and limits of your own, in front\n`);
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
    relay: {
      ...(values.confirmations ? { requiredConfirmations: Number(values.confirmations) } : {}),
      // An operator's chain has 12-second blocks: don't outbid a transaction that is merely waiting.
      stuckAfterMs: Number(values["stuck-after-ms"] ?? 30_000),
      ...(values["rpc-timeout-ms"] ? { rpcTimeoutMs: Number(values["rpc-timeout-ms"]) } : {}),
    },
    ...(values["chain-timeout-ms"] ? { chainTimeoutMs: Number(values["chain-timeout-ms"]) } : {}),
    ...(values["request-timeout-ms"] ? { requestTimeoutMs: Number(values["request-timeout-ms"]) } : {}),
    ...(values["headers-timeout-ms"] ? { headersTimeoutMs: Number(values["headers-timeout-ms"]) } : {}),
    ...(rateLimit === undefined ? {} : { rateLimit }),
    logger: { level: values["log-level"], redact: ["req.headers.authorization"] },
  });
  const stop = async () => {
    await app.close();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  await app.listen({ host: values.host, port: Number(values.port) });
} catch (error) {
  process.stderr.write(`queue-runtime: ${(error as Error).name}: ${redactText((error as Error).message, rpcUrl)}\n`);
  process.exit(1);
}
