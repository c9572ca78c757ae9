import { readFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import type { Hex } from "viem";
import { redactText } from "./redact.ts";
import { buildQueueRuntime } from "./server.ts";

// The queue runtime on its own, as an operator runs it: a manifest, an RPC URL and a relayer key.
// Secrets come from the environment only (a command line is visible to every local user in `ps`).
const HELP = `Usage: node --experimental-strip-types src/main.ts --manifest <file> [options]

  --manifest <file>          the deployment manifest (served verbatim by GET /api/queue/config)
  --artifacts <dir>          folder with the proof files the manifest lists (default: the manifest's folder)
  --host <ip>                interface to bind (default 127.0.0.1)
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

Environment:
  QUEUE_RPC_URL              the chain RPC the runtime uses (required; may carry credentials, never served or logged)
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

try {
  const app = await buildQueueRuntime({
    manifest: await readFile(values.manifest),
    artifactsDir: values.artifacts ?? path.dirname(values.manifest),
    rpcUrl,
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
    logger: { level: "info", redact: ["req.headers.authorization"] },
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
