import type { FastifyInstance } from "fastify";
import type { Hex } from "viem";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import { buildQueueRuntime, warmUpQueueRuntime, type QueueRuntimeOptions } from "../../src/server.ts";
import type { DevAccount } from "../chain/index.ts";
import { CIRCUIT_BUILD_DIR, manifestBytes } from "../deployment/index.ts";
import { definePart, type StackPart } from "../part/index.ts";
import { RecentLines } from "./recent-lines.ts";

/** The networks route's chain names: a wallet that adds the chain shows them. */
export const LOCAL_CHAIN_NAME = "Sepolia (local queue-devstack chain)";
export const LOCAL_FORK_CHAIN_NAME = "Sepolia (local queue-devstack fork)";

export interface StackRuntime {
  /** The queue runtime, built and not listening yet: routes can still be registered on it. */
  app: FastifyInstance;
  /** Another runtime with the same options but another deployment (the alternate of a config switch). */
  build(deployment: { manifest: DeploymentConfig; relayerPrivateKey: Hex; store: string }): Promise<FastifyInstance>;
  /** Starts listening; the queue's URL. */
  listen(): Promise<string>;
  /** The runtime's last log lines, unless the stack was given a logger. */
  recentLogs(): string[];
}

/**
 * What the runtime's start does that needs no chain (the proof files' hashes among it), done ahead: the
 * stack calls it while anvil boots, and never waits for it.
 */
export function warmUpRuntime(circuit: { files: ReadonlyArray<{ file: string }> }): void {
  void warmUpQueueRuntime({ dir: CIRCUIT_BUILD_DIR, names: circuit.files.map((f) => f.file) }).catch(() => {});
}

/** The queue runtime (src/) with a dev stack's options, reaching anvil through the fault proxy. */
export function runtimePart(
  options: Pick<QueueRuntimeOptions, "relay" | "logger"> & {
    queuePort?: number;
    corsOrigins?: readonly string[];
    runtime?: Pick<QueueRuntimeOptions, "chainTimeoutMs" | "requestTimeoutMs" | "headersTimeoutMs" | "quotes" | "rateLimit">;
  },
  args: {
    host: string;
    chain: { rpcUrl: string; relayer: DevAccount };
    faults: { url: string };
    fork: boolean;
    manifest: DeploymentConfig;
    /** The operation store's path; a store the start creates is the state dir's to remove if the start fails. */
    dir: { storePath: string; claimStoreIfNew(): Promise<void> };
  },
): StackPart<StackRuntime> {
  return definePart("runtime", async (onStop) => {
    const { host, chain, faults, fork, manifest } = args;
    const runtimeLog = new RecentLines();
    // The runtime's options but its deployment: the alternate deployment's runtime (a config switch) shares them.
    const runtimeOptions = {
      rpcUrl: faults.url,
      // New blocks by subscription, straight from anvil (faults apply to reads, through the proxy).
      wsRpcUrl: chain.rpcUrl.replace(/^http:/, "ws:"),
      publicRpcUrl: chain.rpcUrl,
      explorerUrl: fork ? "https://sepolia.etherscan.io" : null,
      // A wallet shows this name: it must not take the dev chain for the real Sepolia (same chain id).
      chainName: fork ? LOCAL_FORK_CHAIN_NAME : LOCAL_CHAIN_NAME,
      corsOrigins: options.corsOrigins ?? ["loopback"],
      artifactsDir: CIRCUIT_BUILD_DIR,
      // No rate limit unless asked: a test suite must never trip it.
      rateLimit: false,
      // Nor a per-client share of the in-flight limit: every client of a dev stack is this machine.
      relay: { maxLivePerClient: options.relay?.maxLiveOperations ?? Number.MAX_SAFE_INTEGER, ...options.relay },
      ...options.runtime,
      logger: options.logger ?? { level: "info", stream: runtimeLog },
    } satisfies Omit<QueueRuntimeOptions, "manifest">;
    const build: StackRuntime["build"] = (deployment) =>
      buildQueueRuntime({ ...runtimeOptions, manifest: manifestBytes(deployment.manifest), relayerPrivateKey: deployment.relayerPrivateKey, store: deployment.store });
    await args.dir.claimStoreIfNew();
    const runtime = await build({ manifest, relayerPrivateKey: chain.relayer.privateKey, store: args.dir.storePath });
    onStop(() => runtime.close());
    return {
      app: runtime,
      build,
      async listen() {
        await runtime.listen({ host, port: options.queuePort ?? 0 });
        const address = runtime.server.address();
        const queuePort = typeof address === "object" && address !== null ? address.port : 0;
        return `http://${host}:${queuePort}`;
      },
      recentLogs: () => (options.logger === undefined ? runtimeLog.recent() : []),
    };
  });
}
