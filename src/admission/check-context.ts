import type { Address, PublicClient } from "viem";
import type { DeploymentConfig } from "../config/deployment-config.ts";
import type { RelaySettings } from "../config/relay-settings.ts";

/** Everything the checks read. */
export interface CheckContext {
  config: DeploymentConfig;
  chain: PublicClient;
  relayer: Address;
  settings: RelaySettings;
  /** Our own mined operation that spent a nullifier, if any: a nullifier_spent answer names it. */
  spender: (nullifier: string) => string | undefined;
}
