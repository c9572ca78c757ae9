import { randomUUID } from "node:crypto";
import type { BrowserContext } from "@playwright/test";
import type { DevStack } from "../index.ts";
import { StackChain } from "./wallet-chain.ts";
import { installPageWallet, type WalletInfo } from "./wallet-page.ts";
import { TestWallet } from "./wallet.ts";

/** The `testWallet` option: how the wallet is put in the test's pages. */
export interface TestWalletOptions {
  /** Also set `window.ethereum`, besides the EIP-6963 announcement. Default true. */
  windowEthereum?: boolean;
  /** The dev account selected at the start (an index of `stack.accounts`). Default 1: neither the deployer nor the relayer, as the vitest fixtures' walletClient. */
  account?: number;
}

const BINDING = "__queueDevstackWallet";
const EMITTER = "__queueDevstackWalletEvent";
// A test tube: plain, and not any real wallet's mark.
const ICON = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><rect width="24" height="24" rx="4" fill="#b00020"/><path d="M9 3h6M10 3v12a2 2 0 0 0 4 0V3" stroke="#fff" stroke-width="2" fill="none"/></svg>')}`;

/**
 * Puts the test wallet in every page of `context`, before the app's scripts: the page side by an init
 * script, requests carried to the test process by a binding, events sent back to each open page.
 */
export async function installTestWallet(context: BrowserContext, stack: DevStack, options: TestWalletOptions = {}): Promise<TestWallet> {
  const wallet = new TestWallet({
    chain: new StackChain(stack.rpcUrl),
    accounts: stack.accounts,
    account: options.account ?? 1,
    emit: async (event, value) => {
      await Promise.all(
        context.pages().map((page) =>
          page.evaluate(([emitter, event, value]) => (globalThis as unknown as Record<string, (e: unknown, v: unknown) => void>)[emitter as string]?.(event, value), [EMITTER, event, value] as const).catch(() => {
            /* a page closing or navigating: its next document asks again */
          }),
        ),
      );
    },
  });
  await context.exposeBinding(BINDING, (source, request: { method: string; params: unknown }) => wallet.request(request.method, request.params, originOf(source.frame.url())));
  const info: WalletInfo = { uuid: randomUUID(), name: "queue-devstack test wallet (development only)", icon: ICON, rdns: "dev.queue-devstack.wallet" };
  await context.addInitScript(installPageWallet, { info, windowEthereum: options.windowEthereum ?? true, binding: BINDING, emitter: EMITTER });
  return wallet;
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
