import { BaseError, ContractFunctionRevertedError, createPublicClient, createWalletClient, http, type Hex, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { sepoliaAt } from "../../src/chain/client.ts";

export function clients(rpcUrl: string, privateKey: Hex) {
  const chain = sepoliaAt(rpcUrl);
  const account = privateKeyToAccount(privateKey);
  return {
    account,
    // Polled every 50 ms, not viem's 4 s for a chain with Sepolia's block time: anvil mines at once, and a
    // receipt asked a moment too early cost a test 4 s (half the relays after a reset, issue 40's suites).
    public: createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 50 }) as PublicClient,
    wallet: createWalletClient({ account, chain, transport: http(rpcUrl) }),
  };
}

/** The custom error a call reverted with, decoded by name (e.g. "UnknownRoot"), or the message. */
export function revertName(error: unknown): string {
  if (error instanceof BaseError) {
    const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
    if (reverted instanceof ContractFunctionRevertedError) return reverted.data?.errorName ?? reverted.shortMessage;
    return error.shortMessage;
  }
  return String(error);
}

/** anvil's account 1, the stack's relayer: a publicly known test key (the stack never prints it). */
export const RELAYER_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d" as const;
