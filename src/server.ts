import "./node-version-guard.ts"; // first: one line on an older Node, before anything needing 22 runs
import type { FastifyInstance } from "fastify";
import { buildApp } from "./app.ts";
import { createChainClient } from "./chain/client.ts";
import { keyAccount } from "./chain/key-account.ts";
import { verifyDeployment } from "./chain/verify-deployment.ts";
import { DeploymentConfig } from "./config/deployment-config.ts";
import { manifestPathProblem } from "./config/manifest-paths.ts";
import { relaySettings } from "./config/relay-settings.ts";
import { checkCorsOrigins } from "./cors.ts";
import { checkTrustProxy } from "./client-address.ts";
import { hashProofFiles, loadProofArtifacts } from "./proof-artifacts.ts";
import { DEFAULT_CHAIN_TIMEOUT_MS, positiveInteger, type QueueRuntimeOptions } from "./runtime-options.ts";
import { QueueDevstackError } from "./errors/index.ts";

export { DEFAULT_CHAIN_TIMEOUT_MS, DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, type QueueRuntimeOptions } from "./runtime-options.ts";
export { relaySettings } from "./config/relay-settings.ts";
export { CorsOriginError, type CorsOrigins } from "./cors.ts";
export { TrustProxyError, type TrustProxy } from "./client-address.ts";
// What a start can fail with, each with its stable code (docs/error-codes.md#errors-the-library-throws).
export { QueueDevstackError } from "./errors/index.ts";
export { DeploymentMismatchError } from "./chain/verify-deployment.ts";
export { StoreInUseError, StoreMismatchError, StoreWriteError } from "./store/errors.ts";
export { ArtifactMismatchError } from "./proof-artifacts.ts";
export { DEFAULT_RATE_LIMIT, type RateLimit } from "./protection.ts";
export { relayControl, type RelayControl } from "./relay/control.ts";
export { codeChanges, type CodeChanges, type PatchedContract } from "./code-change.ts";

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
