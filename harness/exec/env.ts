import type { DevStack } from "../dev-stack.ts";
import { STACK_URLS } from "../stack-info/index.ts";

/** Every variable `queue-devstack exec` sets starts with this: the interface a command in any language reads. */
export const ENV_PREFIX = "QUEUE_DEVSTACK_";

/** An asset symbol as a variable name's part: upper case, anything but letters and digits as "_". */
const symbolPart = (symbol: string) => symbol.toUpperCase().replace(/[^A-Z0-9]/g, "_");

/**
 * The stack as environment variables, named once here (the README's table lists them). The dev
 * accounts' keys are anvil's public test keys, as stack.json prints them: development only.
 * `run` numbers the runs of `exec --runs` (1-based), for a command that wants to know.
 */
export function stackEnvironment(stack: DevStack, run: { index: number; count: number } = { index: 1, count: 1 }): Record<string, string> {
  const { manifest, info } = stack;
  const env: Record<string, string> = {
    // RPC_URL, QUEUE_URL, CONFIG_URL, DOCS_URL, DASHBOARD_URL: every URL the summary prints, as stack.json names it.
    ...Object.fromEntries(STACK_URLS.map(({ key, env }) => [env, info[key]])),
    CHAIN_ID: String(manifest.chainId),
    MODE: stack.mode,
    // "dev": dev proofs (DevVerifier; set the client's proofSystem to "dev"); "groth16": real proofs.
    PROOFS: stack.proofs,
    POOL_ADDRESS: manifest.poolAddress,
    DEPLOYMENT_BLOCK: String(manifest.deploymentBlock),
    DEPLOYMENT_BLOCK_HASH: manifest.deploymentBlockHash,
    VERIFIER_ADDRESS: manifest.queue.proof.verifier.address,
    RELAYER_ADDRESS: stack.relayer.address,
    MANIFEST: stack.manifestPath,
    STACK_INFO: stack.stackInfoPath,
    STATE_DIR: stack.stateDir,
    ACCOUNT_COUNT: String(info.devAccounts.length),
    RUN: String(run.index),
    RUNS: String(run.count),
  };
  for (const asset of manifest.assets) env[`ASSET_${symbolPart(asset.symbol)}_ADDRESS`] = asset.address;
  info.devAccounts.forEach((account, i) => {
    env[`ACCOUNT_${i}_ADDRESS`] = account.address;
    env[`ACCOUNT_${i}_PRIVATE_KEY`] = account.privateKey;
  });
  return Object.fromEntries(Object.entries(env).map(([name, value]) => [`${ENV_PREFIX}${name}`, value]));
}
