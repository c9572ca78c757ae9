import type { FastifyInstance } from "fastify";
import type { Hex } from "viem";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import { buildQueueRuntime, prepareQueueRuntime, warmUpQueueRuntime, type PreparedQueueRuntime, type QueueRuntimeOptions } from "../../src/server.ts";
import type { DevAccount } from "../chain/index.ts";
import { CIRCUIT_BUILD_DIR, manifestBytes } from "../deployment/index.ts";
import { definePart, type StackPart } from "../part/index.ts";
import type { DevStackOptions } from "../stack-options.ts";
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
  /** It was built while anvil booted (then checked against the chain). */
  builtAhead: boolean;
}

type RuntimePartOptions = Pick<DevStackOptions, "relay" | "logger" | "queuePort" | "corsOrigins" | "runtime">;

/** The refused submissions a dev stack keeps (relay.keepRejected): the last few hundred, so a client cannot fill the disk. */
export const DEV_KEPT_REFUSALS = 300;

/** anvil's account 1 (its default mnemonic's): the relayer the committed genesis's manifest names. */
const GENESIS_RELAYER_KEY: Hex = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

/** The runtime's options but its deployment and the chain's own URL, and what it may have built ahead. */
export interface RuntimeBuilder {
  /**
   * Builds the runtime for the committed genesis's manifest while anvil boots (routes, store, proof
   * files); the runtime part takes it over if the deployment is that manifest and anvil's relayer the
   * genesis's, and checks it against the chain before it listens. Never required: the start builds it
   * otherwise, and reports what went wrong then.
   */
  buildAhead(manifest: Uint8Array): void;
  /**
   * What the runtime's start does that needs no chain (the proof files' hashes among it), done while
   * anvil boots by a start that builds nothing ahead. The start never waits for it; the part's stop does
   * (a failed start leaves no proof file open, nor hashing).
   */
  warmUp(circuit: { files: ReadonlyArray<{ file: string }> }): void;
  readonly options: Omit<QueueRuntimeOptions, "manifest" | "publicRpcUrl" | "wsRpcUrl">;
  readonly log: RecentLines;
  /** What was built ahead, handed over once (the part closes it if nobody took it). */
  takeAhead(): Promise<{ manifest: Uint8Array; relayerPrivateKey: Hex; prepared: PreparedQueueRuntime } | undefined>;
}

/** The runtime's options, reaching anvil through the fault proxy (which listens before anvil boots). */
export function runtimeBuilderPart(
  options: RuntimePartOptions,
  args: { faults: { url: string }; fork: boolean; dir: { storePath: string; claimStoreIfNew(): Promise<void> } },
): StackPart<RuntimeBuilder> {
  return definePart("runtime builder", async (onStop) => {
    const { faults, fork } = args;
    const log = new RecentLines();
    const runtimeOptions = {
      rpcUrl: faults.url,
      explorerUrl: fork ? "https://sepolia.etherscan.io" : null,
      // A wallet shows this name: it must not take the dev chain for the real Sepolia (same chain id).
      chainName: fork ? LOCAL_FORK_CHAIN_NAME : LOCAL_CHAIN_NAME,
      corsOrigins: options.corsOrigins ?? ["loopback"],
      artifactsDir: CIRCUIT_BUILD_DIR,
      // No rate limit unless asked: a test suite must never trip it.
      rateLimit: false,
      // Nor a per-client share of the in-flight limit: every client of a dev stack is this machine. A
      // submission the chain refuses is kept, so that the refusal names an operation to replay and save.
      relay: { maxLivePerClient: options.relay?.maxLiveOperations ?? Number.MAX_SAFE_INTEGER, keepRejected: DEV_KEPT_REFUSALS, ...options.relay },
      ...options.runtime,
      logger: options.logger ?? { level: "info", stream: log },
    } satisfies Omit<QueueRuntimeOptions, "manifest">;
    let ahead: ReturnType<RuntimeBuilder["takeAhead"]> | undefined;
    let warming: Promise<void> | undefined;
    onStop(async () => {
      await warming;
      await (await ahead)?.prepared.app.close();
    });
    return {
      options: runtimeOptions,
      log,
      buildAhead(manifest) {
        ahead = (async () => {
          await args.dir.claimStoreIfNew();
          const prepared = await prepareQueueRuntime({ ...runtimeOptions, manifest, relayerPrivateKey: GENESIS_RELAYER_KEY, store: args.dir.storePath });
          return { manifest, relayerPrivateKey: GENESIS_RELAYER_KEY, prepared };
        })().catch(() => undefined);
      },
      warmUp(circuit) {
        warming = warmUpQueueRuntime({ dir: CIRCUIT_BUILD_DIR, names: circuit.files.map((f) => f.file) }).catch(() => {});
      },
      async takeAhead() {
        const taken = await ahead;
        ahead = undefined;
        return taken;
      },
    };
  });
}

/** The queue runtime (src/) with a dev stack's options, checked against the chain before it listens. */
export function runtimePart(
  options: RuntimePartOptions,
  args: {
    host: string;
    builder: RuntimeBuilder;
    chain: { rpcUrl: string; relayer: DevAccount };
    manifest: DeploymentConfig;
    /** The operation store's path; a store the start creates is the state dir's to remove if the start fails. */
    dir: { storePath: string; claimStoreIfNew(): Promise<void> };
  },
): StackPart<StackRuntime> {
  return definePart("runtime", async (onStop) => {
    const { host, chain, manifest, builder } = args;
    const late = {
      // New blocks by subscription, straight from anvil (faults apply to reads, through the proxy).
      wsRpcUrl: chain.rpcUrl.replace(/^http:/, "ws:"),
      publicRpcUrl: chain.rpcUrl,
    };
    // The alternate deployment's runtime (a config switch) shares the options.
    const build: StackRuntime["build"] = (deployment) =>
      buildQueueRuntime({ ...builder.options, ...late, manifest: manifestBytes(deployment.manifest), relayerPrivateKey: deployment.relayerPrivateKey, store: deployment.store });
    const bytes = manifestBytes(manifest);
    const ahead = await builder.takeAhead();
    let runtime: FastifyInstance;
    const builtAhead = ahead !== undefined && ahead.relayerPrivateKey === chain.relayer.privateKey && Buffer.from(ahead.manifest).equals(bytes);
    if (ahead && builtAhead) {
      // The check buildQueueRuntime makes first (it closes the app when it fails).
      runtime = await ahead.prepared.check(late);
    } else {
      await ahead?.prepared.app.close();
      await args.dir.claimStoreIfNew();
      runtime = await build({ manifest, relayerPrivateKey: chain.relayer.privateKey, store: args.dir.storePath });
    }
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
      recentLogs: () => (options.logger === undefined ? builder.log.recent() : []),
      builtAhead,
    };
  });
}
