import { configVariable } from "hardhat/config";
import type { ConfigHooks } from "hardhat/types/hooks";
import { CHAIN_ID } from "../chain/index.ts";
import { DEVSTACK_NETWORK, RPC_URL_VARIABLE } from "./names.ts";

export default async (): Promise<Partial<ConfigHooks>> => ({
  // The devstack network: HTTP to anvil, whose URL is known only once the stack starts (a configuration
  // variable the plugin answers). Accounts are remote: anvil's unlocked dev accounts sign.
  extendUserConfig: async (config, next) => {
    const extended = await next(config);
    if (extended.networks?.[DEVSTACK_NETWORK] !== undefined) return extended;
    const devstack = { type: "http", chainType: "l1", chainId: CHAIN_ID, url: configVariable(RPC_URL_VARIABLE) } as const;
    return { ...extended, networks: { ...extended.networks, [DEVSTACK_NETWORK]: devstack } };
  },
  resolveUserConfig: async (userConfig, resolveConfigurationVariable, next) => ({
    ...(await next(userConfig, resolveConfigurationVariable)),
    devstack: userConfig.devstack ?? {},
  }),
});
