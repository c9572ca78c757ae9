import type { ConfigurationVariableHooks } from "hardhat/types/hooks";
import { RPC_URL_VARIABLE } from "./names.ts";
import { stackFor } from "./stacks.ts";

export default async (): Promise<Partial<ConfigurationVariableHooks>> => ({
  // Asked when Hardhat creates the devstack network's provider: the first connection starts the stack.
  fetchValue: async (context, variable, next) => (variable.name === RPC_URL_VARIABLE ? (await stackFor(context)).rpcUrl : next(context, variable)),
});
