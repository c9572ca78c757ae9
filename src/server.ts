import "./node-version-guard.ts"; // first: one line on an older Node, before anything needing 22 runs
import { createHash } from "node:crypto";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import { serializerCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import type { Hex, PublicClient } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { createChainClient } from "./chain/client.ts";
import { verifyDeployment } from "./chain/verify-deployment.ts";
import { DeploymentConfig } from "./config/deployment-config.ts";
import { describeNetworks, SEPOLIA_CHAIN_NAME } from "./config/networks.ts";
import { manifestPathProblem } from "./config/manifest-paths.ts";
import { checkCorsOrigins, corsFor, type CorsOrigins } from "./cors.ts";
import { checkTrustProxy, type TrustProxy } from "./client-address.ts";
import type { RuntimeContext } from "./context.ts";
import { answerClientError, answerFrameworkError, installProblemHandlers, withCors } from "./errors.ts";
import { hashProofFiles, loadProofArtifacts, type ProofArtifacts } from "./proof-artifacts.ts";
import { registerOpenApi } from "./openapi.ts";
import { artifactsRoutes } from "./routes/artifacts.ts";
import { assetsRoutes } from "./routes/assets.ts";
import { configRoutes } from "./routes/config.ts";
import { networksRoutes } from "./routes/networks.ts";
import { relayRoutes } from "./routes/relay.ts";
import { healthRoutes } from "./routes/health.ts";
import { countAnswer, createMetrics, registerMetrics } from "./metrics.ts";
import { subscribeNewHeads } from "./chain/new-heads.ts";
import { keyAccount } from "./chain/key-account.ts";
import { DEFAULT_RATE_LIMIT, registerProtection, securityHeaders, type RateLimit } from "./protection.ts";
import { statusRoutes } from "./routes/status.ts";
import { attachRelayControl } from "./relay/control.ts";
import { attachCodeChanges } from "./code-change.ts";
import { DEFAULT_QUOTE_SETTINGS, Quoter, type QuoteSettings } from "./actions/quoter.ts";
import { quoteRoutes } from "./routes/quote.ts";
import { finalizeRoutes } from "./routes/finalize.ts";
import { Relayer } from "./relay/runtime.ts";
import { DEFAULT_RELAY_SETTINGS, type RelaySettings } from "./relay/settings.ts";
import { SqliteOperationStore } from "./relay/store.ts";
import { validatorCompiler } from "./validation.ts";
import { redactText, redactUrl } from "./redact.ts";
import { makeChildrenLazy, RequestLogController } from "./request-logger.ts";
import { QueueDevstackError } from "./errors/index.ts";

export interface QueueRuntimeOptions {
  /** The manifest file's bytes (what GET /config serves). */
  manifest: Uint8Array;
  /** The chain the runtime reads and writes. May carry credentials: it is never served or logged. */
  rpcUrl: string;
  /** The RPC clients and wallets are told to use (networks route). Defaults to rpcUrl without credentials. */
  publicRpcUrl?: string;
  /** Block explorer for the networks route; null for a chain without one. */
  explorerUrl?: string | null;
  /** The chain's name in the networks route (and so in a wallet). Default "Sepolia"; a local chain says it is local. */
  chainName?: string;
  /** Browser origins allowed to call the queue (CORS): exact origins, and "loopback" for any localhost port. Default: none. */
  corsOrigins?: CorsOrigins;
  /** Folder holding the proof files the manifest lists (queue.proof.artifacts). */
  artifactsDir: string;
  /** The key the runtime relays with; its address must be the manifest's relayFees.relayer. */
  relayerPrivateKey?: Hex;
  /** The operation store: a SQLite file (durable), or ":memory:" (the default). */
  store?: string;
  /** Relayer behaviour; defaults suit a dev chain. */
  relay?: Partial<RelaySettings>;
  /** Quote validity, settle window and slippage of external actions (defaults: 120 s, 600 s, 50 bps). */
  quotes?: Partial<QuoteSettings>;
  /**
   * Per-client limit on relays, quotes and finalizes (429 rate_limited); default 60 a minute; false: none
   * (a dev stack's default, so a test suite never trips it).
   */
  rateLimit?: RateLimit | false;
  /**
   * The reverse proxies in front (Fastify's trustProxy), by their addresses and CIDRs; a hop count or
   * `true` is refused (TrustProxyError: see TrustProxy). The client they name in X-Forwarded-For is then
   * the one every per-client limit counts; without it, every client behind a proxy is the proxy, and one
   * of them uses up all their limits. Default: none trusted.
   */
  trustProxy?: TrustProxy;
  /**
   * The node's WebSocket URL (may carry credentials, never served or logged): new blocks are followed by
   * subscription (eth_subscribe newHeads) besides the relayer's poll, so it sees them at once.
   */
  wsRpcUrl?: string;
  /** Skip checking the manifest against the chain at start (only for tests of the check itself). */
  skipDeploymentCheck?: boolean;
  logger?: FastifyServerOptions["logger"];
  /** Largest request body accepted, in bytes. */
  bodyLimit?: number;
  /** A request (headers and body) not received in full within this is answered 408 request_timeout. Default 30000. */
  requestTimeoutMs?: number;
  /** Headers not received in full within this are answered 408 request_timeout (at most requestTimeoutMs). Default 10000. */
  headersTimeoutMs?: number;
  /**
   * The chain reads a request waits for (a submission's checks, /assets) answer within this as a whole,
   * or the request is a 503 chain_unavailable with Retry-After. Default 3000. The engine's own calls
   * time out after `relay.rpcTimeoutMs`; status answers never wait on the chain.
   */
  chainTimeoutMs?: number;
}

export { CorsOriginError, type CorsOrigins } from "./cors.ts";
export { TrustProxyError, type TrustProxy } from "./client-address.ts";
// What a start can fail with, each with its stable code (docs/error-codes.md#errors-the-library-throws).
export { QueueDevstackError } from "./errors/index.ts";
export { DeploymentMismatchError } from "./chain/verify-deployment.ts";
export { StoreInUseError, StoreMismatchError, StoreWriteError } from "./relay/store.ts";
export { ArtifactMismatchError } from "./proof-artifacts.ts";
export { DEFAULT_RATE_LIMIT, type RateLimit } from "./protection.ts";
export { relayControl, type RelayControl } from "./relay/control.ts";
export { codeChanges, type CodeChanges, type PatchedContract } from "./code-change.ts";

export const DEFAULT_CHAIN_TIMEOUT_MS = 3_000;

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;

/**
 * zod's compilers as the schema controller's factories. Fastify's types speak of ajv's compilers; zod's
 * take the route's zod schema where ajv's take JSON Schema, hence the cast.
 */
const ZOD_SCHEMA_CONTROLLER = {
  compilersFactory: { buildValidator: () => validatorCompiler, buildSerializer: () => serializerCompiler },
} as unknown as NonNullable<FastifyServerOptions["schemaController"]>;

export class ManifestInvalidError extends QueueDevstackError {
  override name = "ManifestInvalidError";
  readonly code = "manifest_invalid";
}

/** Parses and validates manifest bytes; the error lists every problem found. */
export function parseManifest(bytes: Uint8Array): DeploymentConfig {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
  } catch (error) {
    throw new ManifestInvalidError(`manifest is not JSON: ${(error as Error).message}`);
  }
  const parsed = DeploymentConfig.safeParse(json);
  if (!parsed.success) {
    throw new ManifestInvalidError(`manifest does not match the configuration schema: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  }
  const paths = manifestPathProblem(parsed.data);
  if (paths !== null) throw new ManifestInvalidError(`manifest names a path this runtime does not serve: ${paths}`);
  return parsed.data;
}

/**
 * Does ahead what buildQueueRuntime's first call would do that needs neither a chain nor a manifest: the
 * proof files' sha256 (remembered by file identity: the start's own check finds them hashed unless a file
 * changed). A dev stack calls it while anvil boots. Never required; whatever it finds wrong is left to the
 * start to report.
 */
export async function warmUpQueueRuntime(proofFiles?: { dir: string; names: readonly string[] }): Promise<void> {
  if (proofFiles) await hashProofFiles(proofFiles.dir, proofFiles.names);
}

/** What the runtime's options give before any chain call: checked, the clients made (they connect on first use). */
function startOptions(options: QueueRuntimeOptions) {
  // A copy: the bytes served and the config parsed from them stay one, whatever the caller does with its array.
  const manifest = Buffer.from(options.manifest);
  const config = parseManifest(manifest);
  if (options.corsOrigins !== undefined) checkCorsOrigins(options.corsOrigins); // before any chain call
  const trustProxy = options.trustProxy === undefined ? undefined : checkTrustProxy(options.trustProxy);
  const account = options.relayerPrivateKey === undefined ? null : keyAccount(options.relayerPrivateKey);
  if ((account?.address ?? null) !== config.relayFees.relayer) {
    throw new ManifestInvalidError(`the manifest names relayer ${config.relayFees.relayer}, but this runtime relays as ${account?.address ?? "nobody"}`);
  }
  const settings = relaySettings(options.relay);
  const chainTimeoutMs = positiveInteger("chainTimeoutMs", options.chainTimeoutMs ?? DEFAULT_CHAIN_TIMEOUT_MS);
  // Requests fail fast (one try, short timeout) and the client retries; the engine retries on its own.
  const chain = createChainClient(options.rpcUrl, { timeoutMs: chainTimeoutMs, retryCount: 0 });
  const engineChain = createChainClient(options.rpcUrl, { timeoutMs: settings.rpcTimeoutMs, retryCount: 1 });
  return { manifest, config, account, settings, chain, engineChain, chainTimeoutMs, trustProxy };
}

/**
 * Builds the queue runtime's Fastify app from a manifest and an RPC URL. It checks the manifest
 * against the chain first and refuses to start on any mismatch.
 */
export async function buildQueueRuntime(options: QueueRuntimeOptions): Promise<FastifyInstance> {
  const started = startOptions(options);
  // The chain check and the proof files' check at once (the chain's error first when both fail).
  const [verified, loaded] = await Promise.allSettled([options.skipDeploymentCheck ? undefined : verifyDeployment(started.engineChain, started.config), loadProofArtifacts(started.config, options.artifactsDir)]);
  if (verified.status === "rejected") {
    if (loaded.status === "fulfilled") await loaded.value.close();
    throw verified.reason;
  }
  if (loaded.status === "rejected") throw loaded.reason;
  const proofFiles = loaded.value;
  try {
    const built = await buildApp(options, { ...started, proofFiles });
    built.connect(options);
    return built.app;
  } catch (error) {
    await proofFiles.close();
    throw error;
  }
}

/** A runtime built before its chain answers: see prepareQueueRuntime. */
export interface PreparedQueueRuntime {
  /** Its routes registered, its proof files checked; it must not listen (nor be ready) before check() resolved. */
  app: FastifyInstance;
  /**
   * Checks the manifest against the chain (as buildQueueRuntime does first) and connects what needs the
   * chain's own URL: the networks route's RPC and the head subscription. On a mismatch the app is closed
   * and the error thrown.
   */
  check(late: Pick<QueueRuntimeOptions, "publicRpcUrl" | "wsRpcUrl">): Promise<FastifyInstance>;
}

/**
 * buildQueueRuntime in two steps, for a caller that knows the manifest and the RPC URL (a proxy it runs,
 * say) before the chain answers: the app is built while the chain boots, and checked against it once up.
 */
export async function prepareQueueRuntime(options: Omit<QueueRuntimeOptions, "publicRpcUrl" | "wsRpcUrl">): Promise<PreparedQueueRuntime> {
  const started = startOptions(options);
  const proofFiles = await loadProofArtifacts(started.config, options.artifactsDir);
  let built: Awaited<ReturnType<typeof buildApp>>;
  try {
    built = await buildApp(options, { ...started, proofFiles });
  } catch (error) {
    await proofFiles.close();
    throw error;
  }
  return {
    app: built.app,
    async check(late) {
      try {
        if (!options.skipDeploymentCheck) await verifyDeployment(started.engineChain, started.config);
      } catch (error) {
        await built.app.close();
        throw error;
      }
      built.connect({ ...late, rpcUrl: options.rpcUrl });
      return built.app;
    },
  };
}

/** The runtime's app, once its deployment and proof files are checked: the proof files are closed with it. */
async function buildApp(
  options: QueueRuntimeOptions,
  checked: {
    manifest: Buffer;
    config: DeploymentConfig;
    account: PrivateKeyAccount | null;
    settings: RelaySettings;
    chain: PublicClient;
    engineChain: PublicClient;
    chainTimeoutMs: number;
    trustProxy: ReturnType<typeof checkTrustProxy> | undefined;
    proofFiles: ProofArtifacts;
  },
): Promise<{ app: FastifyInstance; connect(urls: Pick<QueueRuntimeOptions, "rpcUrl" | "publicRpcUrl" | "wsRpcUrl">): void }> {
  const { manifest, config, account, settings, chain, engineChain, chainTimeoutMs, trustProxy, proofFiles } = checked;
  const artifacts = proofFiles.byName;
  const networks = (publicRpcUrl: string) =>
    describeNetworks({ chainName: options.chainName ?? SEPOLIA_CHAIN_NAME, explorerUrl: options.explorerUrl ?? null, walletRpcUrl: publicRpcUrl, rpcUrl: publicRpcUrl });
  const context: RuntimeContext = {
    config,
    configBytes: manifest,
    configEtag: `"${createHash("sha256").update(manifest).digest("base64url")}"`,
    chain,
    chainTimeoutMs,
    artifacts,
    relayer: null,
    quoter: null,
    networks: networks(redactUrl(options.rpcUrl)),
    patched: [],
  };

  const requestTimeoutMs = positiveInteger("requestTimeoutMs", options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
  const headersTimeoutMs = Math.min(requestTimeoutMs, positiveInteger("headersTimeoutMs", options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS));
  const metrics = createMetrics(() => context.relayer?.store ?? null);
  // Logs requests (reads only from --log-level debug on) and counts every answer in /metrics.
  const logController = new RequestLogController((request, reply) => countAnswer(metrics.http, request, reply));
  const cors = corsFor(options.corsOrigins);
  const everyAnswer = { ...securityHeaders(), ...cors?.headers };
  const app = Fastify({
    logger: withRedactedErrors(options.logger ?? false, options.rpcUrl),
    // Fastify's own errors (a malformed URL, say), parser errors and the closing answer are problems too.
    // A framework error runs no hook and sets up no response listener: its answer is given the headers
    // and the CORS of every answer here, and is counted (and logged) as it leaves.
    frameworkErrors: (error, request, reply) => {
      reply.raw.once("finish", () => logController.requestCompleted(null, request, reply));
      reply.headers(everyAnswer);
      withCors(cors, request, reply, () => answerFrameworkError(error, request, reply));
    },
    clientErrorHandler: (error, socket) => answerClientError(error, socket, { requestTimeoutMs }),
    return503OnClosing: false,
    requestTimeout: requestTimeoutMs,
    // Node checks these timeouts only every connectionsCheckingInterval (default 30 s): check often
    // enough that a timeout is answered close to when it expires.
    http: { headersTimeout: headersTimeoutMs, requestTimeout: requestTimeoutMs, connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(headersTimeoutMs / 4))) },
    bodyLimit: options.bodyLimit ?? 64 * 1024,
    // Never trust a client-chosen request id in our logs.
    requestIdHeader: false,
    ...(trustProxy === undefined ? {} : { trustProxy }),
    logController,
    // zod validates and serializes every route (its schemas are the one source of truth): given as the
    // compilers' factories, Fastify never builds its default ajv and fast-json-stringify compilers, nor
    // loads them (a fifth of the runtime's start, bench:startup).
    schemaController: ZOD_SCHEMA_CONTROLLER,
  }).withTypeProvider<ZodTypeProvider>();
  logController.logReads = app.log.level === "debug" || app.log.level === "trace";
  // A request's logger is made on its first line: a polled read logs nothing.
  makeChildrenLazy(app.log);
  app.addHook("onClose", () => proofFiles.close());
  // Only JSON bodies: a text/plain body is a 415, not a string that fails the schema.
  app.removeContentTypeParser("text/plain");
  let headsUrl: string | undefined; // the node's WebSocket, once connect() is told it
  if (account) {
    const store = new SqliteOperationStore(options.store ?? ":memory:");
    try {
      store.bindDeployment(`${config.chainId}:${config.poolAddress}:${config.deploymentBlockHash}`);
    } catch (error) {
      store.close();
      throw error;
    }
    // New blocks by subscription, when the node has a WebSocket: the relayer looks at once. It opens with
    // the first operation that moves: only operations in flight wait on heads (an idle runtime holds no
    // socket, and a start opens none before it is ready).
    let heads: ReturnType<typeof subscribeNewHeads> | null = null;
    let closing = false;
    const openHeads = () => {
      const wsRpcUrl = headsUrl;
      if (heads !== null || wsRpcUrl === undefined || closing) return;
      heads = subscribeNewHeads(wsRpcUrl, (head) => relayer.engine.newHead(head), (error) => app.log.debug({ detail: redactText(error.message, wsRpcUrl) }, "newHeads subscription failed; polling meanwhile"));
    };
    const events: typeof metrics.engine = {
      ...metrics.engine,
      transition(op, from) {
        openHeads();
        metrics.engine.transition(op, from);
      },
    };
    const relayer = new Relayer({ store, chain, engineChain, account, config, settings, log: app.log, chainTimeoutMs, events });
    context.relayer = relayer;
    context.quoter = new Quoter({ config, chain, account, store, settings: { ...DEFAULT_QUOTE_SETTINGS, ...options.quotes }, chainTimeoutMs });
    attachRelayControl(app, relayer);
    app.addHook("onClose", async () => {
      closing = true;
      await heads?.close();
      await relayer.engine.stop();
      store.close();
    });
    // Once the app is fully built: a failed build leaves no timer running.
    app.addHook("onReady", async () => {
      relayer.engine.start();
      relayer.head.refresh(); // the first status answer has a head to count from
    });
  }
  attachCodeChanges(app, context, engineChain);

  const knownPaths = new Map<string, string[]>();
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    knownPaths.set(route.url, [...(knownPaths.get(route.url) ?? []), ...methods.filter((m) => m !== "HEAD")]);
  });
  // Its onRequest hook, the one every request runs, puts the security and CORS headers on every answer,
  // problems included; @fastify/cors's own hook runs from it, for the requests it can change.
  installProblemHandlers(app, knownPaths, everyAnswer, cors);
  await cors?.register(app);
  await registerProtection(app, options.rateLimit ?? DEFAULT_RATE_LIMIT);
  // Before the route plugins: @fastify/swagger collects routes through onRoute.
  registerOpenApi(app);

  registerMetrics(app, metrics);
  await app.register(configRoutes, { context });
  await app.register(networksRoutes, { context });
  await app.register(assetsRoutes, { context });
  await app.register(artifactsRoutes, { context });
  await app.register(relayRoutes, { context });
  await app.register(quoteRoutes, { context });
  await app.register(finalizeRoutes, { context });
  await app.register(statusRoutes, { context });
  await app.register(healthRoutes, { context });
  return {
    app,
    // What needs the chain's own URL, given once it is known (a chain that boots meanwhile).
    connect(urls) {
      context.networks = networks(urls.publicRpcUrl ?? redactUrl(urls.rpcUrl));
      headsUrl = urls.wsRpcUrl;
    },
  };
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer, got ${String(value)}`);
  return value;
}

/** Relayer settings over the defaults, checked: a NaN would silently stop confirmations or bumps. */
export function relaySettings(overrides: Partial<RelaySettings> = {}): RelaySettings {
  const settings = { ...DEFAULT_RELAY_SETTINGS, ...overrides };
  for (const [name, value] of Object.entries(settings)) {
    const ok = typeof value === "bigint" ? value > 0n : Number.isInteger(value) && value >= 0;
    if (!ok) throw new RangeError(`relay setting ${name} must be a non-negative integer, got ${String(value)}`);
  }
  if (settings.requiredConfirmations < 1) throw new RangeError("relay setting requiredConfirmations must be at least 1");
  return settings;
}

/**
 * Error objects are logged with the runtime's RPC URL scrubbed from their message and stack: viem
 * quotes the URL it called, and an operator's URL may carry an API key.
 */
function withRedactedErrors(logger: FastifyServerOptions["logger"], rpcUrl: string): FastifyServerOptions["logger"] {
  // No logger is a silent one: Fastify then still calls the log controller as each answer leaves, which counts it.
  if (!logger) return { level: "silent" };
  const base = logger === true ? {} : logger;
  const err = (error: Error) => ({
    type: error.name,
    message: redactText(error.message ?? "", rpcUrl),
    stack: redactText(error.stack ?? "", rpcUrl),
    code: (error as { code?: unknown }).code,
  });
  return { ...base, serializers: { ...(base as { serializers?: object }).serializers, err } } as FastifyServerOptions["logger"];
}
