import type { Address, Hex } from "viem";
import { mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import { ProblemError } from "../../src/problem.ts";
import { relayControl } from "../../src/relay/control.ts";
import { jsonRpc, type ForkCapture, type RpcFaultProxy, type StackChain } from "../chain/index.ts";
import { deployFixtures, describeDeployment, type Contracts } from "../deployment/index.ts";
import { definePart, type StackPart } from "../part/index.ts";
import type { StackRuntime } from "../runtime/index.ts";
import { bundleBytes } from "../bundle/index.ts";
import { deploymentSwitch, type DeploymentSwitch } from "./deployment-switch.ts";
import type { AllowedHosts } from "./allowed-hosts.ts";
import type { AllowedOrigins } from "./cross-origin.ts";
import { DEV_PREFIX } from "./dev-route-kit.ts";
import { registerDevRoutes } from "./dev-routes.ts";
import type { ControlLock } from "../snapshot/index.ts";
import { operationTrace, type Trace } from "../trace/index.ts";
import { replayer, type Replayer } from "../replay/index.ts";

/** anvil's dev mnemonic: its account 10 relays for the alternate deployment (anvil funds 0 to 9). */
const ANVIL_MNEMONIC = "test test test test test test test test test test test junk";
function alternateRelayerKey(): Hex {
  const key = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 10 }).getHdKey().privateKey;
  if (!key) throw new Error("no key derived for the alternate relayer");
  return `0x${Buffer.from(key).toString("hex")}`;
}

export interface DevRoutes {
  deployments: DeploymentSwitch;
  /** An operation's trace; undefined when the store has no such operation. */
  traceOperation(operationId: string): Promise<Trace | undefined>;
  /** Replays of stored operations (stack.replay, POST /api/dev/operations/{id}/replay). */
  replayer: Replayer;
}

/**
 * The dev routes (/api/dev) on the runtime, registered before it listens, and what they control beside
 * the fault proxy: the deployment switch (an alternate deployment, built on first use) and traces.
 */
export function devRoutesPart(args: {
  runtime: StackRuntime;
  chain: StackChain;
  contracts: Pick<Contracts, "fixtures" | "circuit">;
  manifest: DeploymentConfig;
  manifestPath: string;
  faults: RpcFaultProxy;
  fork: ForkCapture | null;
  /** The Host names the dev routes answer to, besides loopback ones (DNS rebinding protection). */
  allowedHosts: AllowedHosts;
  /** The pages whose requests may change something (cross-site request protection). */
  allowedOrigins: AllowedOrigins;
  /** The dev controls one at a time (the stack's): the routes take it, as the stack's own controls do. */
  lock: ControlLock;
  /** What POST /api/dev/reset does; undefined until the stack's snapshots exist (they start after the runtime listens). */
  reset: () => (() => Promise<void>) | undefined;
}): StackPart<DevRoutes> {
  return definePart("dev routes", async (onStop) => {
    const { chain, manifest, manifestPath, faults } = args;
    const { client, relayer, deployer } = chain;
    const { fixtures, circuit } = args.contracts;
    const runtime = args.runtime.app;
    const deployments: DeploymentSwitch = deploymentSwitch({
      original: runtime,
      devPrefix: DEV_PREFIX,
      originalConfig: manifest,
      // A second copy of the fixtures with a relayer of its own (two engines never share a nonce).
      buildAlternate: async () => {
        const key = alternateRelayerKey();
        const alternateRelayer = privateKeyToAccount(key).address;
        const deployment = await deployFixtures({ client, fixtures, deployerKey: deployer.privateKey, holders: chain.accounts.map((a) => a.address), levels: circuit.levels, proofs: manifest.queue.proof.system }).catch((error: unknown) => {
          // anvil did not take the copy: the deployer's transactions a reorg sent again, waiting in a held mempool, hold its nonces.
          throw new ProblemError("chain_unavailable", `the alternate deployment was not mined (${(error as Error).message}): release mining (mining auto) or reset, then try again`, { headers: { "retry-after": "1" } });
        });
        await jsonRpc(chain.rpcUrl, "anvil_setBalance", [alternateRelayer, `0x${(10_000n * 10n ** 18n).toString(16)}`]);
        const config = await describeDeployment({ client, pool: deployment.pool, deploymentBlock: deployment.deploymentBlock, fixtures, circuit, relayer: alternateRelayer });
        faults.addDeployment(deployment.pool, config.queue.proof.verifier.address as Address);
        // Its operations live as long as it is served or settling: a store in memory.
        return { runtime: await args.runtime.build({ manifest: config, relayerPrivateKey: key, store: ":memory:" }), config };
      },
    });
    onStop(() => deployments.discard());
    const traceOperation = async (operationId: string): Promise<Trace | undefined> => {
      const control = relayControl(runtime);
      const op = control?.operation(operationId);
      if (!control || !op) return undefined;
      return operationTrace({ rpcUrl: chain.rpcUrl, config: manifest, fixtures, relayer: relayer.address, gas: control.gasLimit() }, op);
    };
    const { lock } = args;
    const replays = replayer({ rpcUrl: chain.rpcUrl, config: manifest, fixtures, relayer: relayer.address, control: relayControl(runtime), runtime, lock });
    await registerDevRoutes(runtime, {
      replayer: replays,
      lock,
      reset: args.reset,
      allowedHosts: args.allowedHosts,
      allowedOrigins: args.allowedOrigins,
      accounts: chain.devAccounts.map((a) => ({ address: a.address, anvilIndex: chain.accounts.findIndex((b) => b.address === a.address) })),
      rpcUrl: chain.rpcUrl,
      relayer: relayer.address,
      control: relayControl(runtime),
      faults,
      deployments,
      trace: traceOperation,
      bundle: () => bundleBytes({ rpcUrl: chain.rpcUrl, manifestPath, control: relayControl(runtime), fork: args.fork }),
    });
    return { deployments, traceOperation, replayer: replays };
  });
}
