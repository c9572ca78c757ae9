import { createHash } from "node:crypto";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import { serializerCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import type { PublicClient } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { subscribeNewHeads } from "./chain/new-heads.ts";
import type { DeploymentConfig } from "./config/deployment-config.ts";
import { describeNetworks, SEPOLIA_CHAIN_NAME } from "./config/networks.ts";
import type { RelaySettings } from "./config/relay-settings.ts";
import type { checkTrustProxy } from "./client-address.ts";
import { attachCodeChanges } from "./code-change.ts";
import type { RuntimeContext } from "./context.ts";
import { corsFor } from "./cors.ts";
import { answerClientError, answerFrameworkError, installProblemHandlers, withCors } from "./errors.ts";
import { countAnswer, createMetrics, registerMetrics } from "./metrics.ts";
import { registerOpenApi } from "./openapi.ts";
import type { ProofArtifacts } from "./proof-artifacts.ts";
import { DEFAULT_RATE_LIMIT, registerProtection, securityHeaders } from "./protection.ts";
import { DEFAULT_QUOTE_SETTINGS, Quoter } from "./quote/quoter.ts";
import { redactText, redactUrl } from "./redact.ts";
import { attachRelayControl } from "./relay/control.ts";
import { Relayer } from "./relay/relayer.ts";
import { makeChildrenLazy, RequestLogController } from "./request-logger.ts";
import { artifactsRoutes } from "./routes/artifacts.ts";
import { assetsRoutes } from "./routes/assets.ts";
import { configRoutes } from "./routes/config.ts";
import { finalizeRoutes } from "./routes/finalize.ts";
import { healthRoutes } from "./routes/health.ts";
import { networksRoutes } from "./routes/networks.ts";
import { quoteRoutes } from "./routes/quote.ts";
import { relayRoutes } from "./routes/relay.ts";
import { statusRoutes } from "./routes/status.ts";
import { DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, positiveInteger, type QueueRuntimeOptions } from "./runtime-options.ts";
import { SqliteOperationStore } from "./store/store.ts";
import { validatorCompiler } from "./validation.ts";

/**
 * zod's compilers as the schema controller's factories. Fastify's types speak of ajv's compilers; zod's
 * take the route's zod schema where ajv's take JSON Schema, hence the cast.
 */
const ZOD_SCHEMA_CONTROLLER = {
  compilersFactory: { buildValidator: () => validatorCompiler, buildSerializer: () => serializerCompiler },
} as unknown as NonNullable<FastifyServerOptions["schemaController"]>;

/** The runtime's app, once its deployment and proof files are checked: the proof files are closed with it. */
export async function buildApp(
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
