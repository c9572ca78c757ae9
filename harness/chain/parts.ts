import type { Address, Hex, PublicClient } from "viem";
import { createChainClient } from "../../src/chain/client.ts";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import { redactUrl } from "../../src/redact.ts";
import { definePart, timed, type StackPart } from "../part/index.ts";
import type { DevStackOptions } from "../stack-options.ts";
import { startChain, type Chain, type DevAccount } from "./chain.ts";
import { startChainSaver } from "./chain-saver.ts";
import { withoutStrayBlocks } from "./stray-blocks.ts";
import { resolveForkPoint, type ForkPoint } from "./fork.ts";
import { DEFAULT_FORK_CACHE_DIR, openRpcCache } from "./rpc-cache.ts";
import { startRpcFaultProxy, type RpcFaultProxy } from "./rpc-faults.ts";
import { startRpcForwarder, type ForkReads } from "./rpc-forwarder.ts";

/** Dev accounts by anvil index: 0 deploys, 1 relays, the rest are for apps and tests. */
const DEPLOYER_INDEX = 0;
const RELAYER_INDEX = 1;

/** A dev account's index in anvil's list (its `--accounts` order): the relayer's is skipped in ours. */
export const anvilIndexOf = (devAccountIndex: number) => (devAccountIndex < RELAYER_INDEX ? devAccountIndex : devAccountIndex + 1);

/** What a fork bundle carries besides anvil's dump: the fork point, and the upstream state and blocks anvil read. */
export interface ForkCapture {
  blockNumber: number;
  blockHash: Hex;
  reads: ForkReads;
}

export interface ForkUpstream {
  /** The pinned fork point; null for a local chain. */
  fork: ForkPoint | null;
  /** What anvil forks: the forwarder, at the fork point. */
  anvilFork: { url: string; blockNumber: bigint } | undefined;
  capture: ForkCapture | null;
}

/** A fork's upstream, reached through a loopback forwarder, and its fork point; nothing for a local chain. */
export function forkUpstreamPart(options: Pick<DevStackOptions, "forkUrl" | "forkBlockNumber" | "forkCacheDir" | "onProgress">): StackPart<ForkUpstream> {
  return definePart("fork upstream", async (onStop) => {
    // anvil forks a loopback forwarder: the upstream's credentials never reach its command line or files.
    // It keeps the upstream's immutable answers, to answer them when the upstream cannot be reached.
    const forwarder =
      options.forkUrl === undefined
        ? null
        : await startRpcForwarder(options.forkUrl, { cache: await openRpcCache(options.forkCacheDir ?? DEFAULT_FORK_CACHE_DIR, redactUrl(options.forkUrl)) });
    if (forwarder) onStop(() => forwarder.close());
    const fork =
      options.forkUrl === undefined
        ? null
        : await timed(options.onProgress, "resolve fork point", () => resolveForkPoint(options.forkUrl as string, toBigInt(options.forkBlockNumber), forwarder?.url), (f) =>
            `${f.displayUrl} at block ${f.blockNumber}`,
          );
    return {
      fork,
      anvilFork: fork && forwarder ? { url: forwarder.url, blockNumber: fork.blockNumber } : undefined,
      capture: fork && forwarder ? { blockNumber: Number(fork.blockNumber), blockHash: fork.blockHash, reads: forwarder.reads } : null,
    };
  });
}

export interface StackChain extends Chain {
  client: PublicClient;
  relayer: DevAccount;
  deployer: DevAccount;
  /** Funded accounts for apps and tests: anvil's, the relayer excluded. */
  devAccounts: DevAccount[];
  /** The chain is known good (deployed, or checked against the manifest): anvil writes its dump when stopped. */
  markGood(): void;
}

/** anvil, local or forking the upstream, from a saved chain or the genesis when there is one. */
export function chainPart(
  options: Pick<DevStackOptions, "chainPort" | "persist" | "onProgress" | "signal">,
  args: {
    host: string;
    /** What the start does while anvil boots (see ChainOptions.onBooting). */
    onBooting?: () => void;
    dir: { stateDir: string; chainStateFile: string; resume: boolean; recordAnvil(anvil: { marker: string; pid: number | null }): Promise<void> };
    upstream: ForkUpstream;
    /** The prepared genesis's state, for a new local chain. */
    genesisState: string | undefined;
  },
): StackPart<StackChain> {
  return definePart("chain", async (onStop) => {
    const { dir, upstream } = args;
    const loadState = dir.resume ? await withoutStrayBlocks(dir.chainStateFile, dir.stateDir) : { file: args.genesisState, remove: async () => {} };
    const chain: Chain = await timed(options.onProgress, upstream.fork ? "start anvil (fork)" : "start anvil", () =>
      startChain({
        host: args.host,
        port: options.chainPort ?? 0,
        stateDir: dir.stateDir,
        fork: upstream.anvilFork,
        loadState: loadState.file,
        // anvil writes the chain when it is stopped, also by the orphan guard when this process dies.
        dumpState: options.persist ? dir.chainStateFile : undefined,
        onProcess: (anvil) => dir.recordAnvil(anvil),
        onBooting: args.onBooting,
        signal: options.signal,
      }).finally(loadState.remove),
    );
    // The chain is written only once it is known good (deployed, or checked against the manifest): until
    // then anvil is stopped without its dump, and a refused start leaves the saved files as they were.
    let chainGood = !options.persist;
    onStop(() => chain.stop({ graceful: chainGood }));
    return {
      ...chain,
      client: createChainClient(chain.rpcUrl),
      relayer: chain.accounts[RELAYER_INDEX] as DevAccount,
      deployer: chain.accounts[DEPLOYER_INDEX] as DevAccount,
      devAccounts: chain.accounts.filter((_, i) => i !== RELAYER_INDEX),
      markGood: () => {
        chainGood = true;
      },
    };
  });
}

/**
 * A persisted stack's chain, kept on disk (chain-saver.ts) from the moment it is known good; the part
 * after the chain, so it stops before anvil does. keepSaved() marks the chain good on any stack.
 */
export function saverPart(options: Pick<DevStackOptions, "persist">, args: { chain: StackChain; file: string }): StackPart<{ keepSaved(): Promise<void> }> {
  return definePart("saver", async (onStop) => ({
    async keepSaved() {
      args.chain.markGood();
      if (!options.persist) return;
      const saver = startChainSaver({ rpcUrl: args.chain.rpcUrl, file: args.file });
      await saver.saveNow();
      onStop(() => saver.stop({ finalSave: true })); // runs before anvil is stopped
    },
  }));
}

/**
 * The fault proxy: the runtime reaches anvil through it; wallets, clients and the controls reach anvil
 * directly. It listens before anvil boots (the runtime is built meanwhile, with its URL) and is
 * connected to anvil and the deployment with connectFaults once both are known.
 */
export function faultsPart(): StackPart<RpcFaultProxy> {
  return definePart("faults", async (onStop) => {
    const faults = await startRpcFaultProxy();
    onStop(() => faults.close());
    return faults;
  });
}

/** The fault proxy pointed at anvil, its revert-next armed for the manifest's Pool and verifier. */
export function connectFaults(faults: RpcFaultProxy, args: { chain: { rpcUrl: string }; manifest: DeploymentConfig }): void {
  faults.connect({ anvilUrl: args.chain.rpcUrl, pool: args.manifest.poolAddress as Address, verifier: args.manifest.queue.proof.verifier.address as Address });
}

function toBigInt(value: bigint | number | undefined): bigint | undefined {
  return value === undefined ? undefined : BigInt(value);
}
