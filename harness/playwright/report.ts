import type { TestInfo } from "@playwright/test";
import { diagnosticsText, type DevStack } from "../index.ts";
import type { TestWallet } from "./wallet.ts";

/** When a test's stack is saved as a repro bundle and attached to its report; Playwright's trace option's words. */
export type StackBundleMode = "off" | "on" | "retain-on-failure";

function failed(testInfo: TestInfo): boolean {
  return testInfo.status !== testInfo.expectedStatus;
}

/**
 * A finished test's stack side in its report: on failure, the stack's diagnostics (the operations it
 * relayed, anvil's and the runtime's last lines); with `bundle`, the stack itself, saved as a repro
 * bundle (`npx queue-devstack --load <it>`).
 */
export async function attachStack(stack: DevStack, testInfo: TestInfo, since: string, bundle: StackBundleMode): Promise<void> {
  if (failed(testInfo)) await testInfo.attach("queue-devstack diagnostics", { body: diagnosticsText(stack.diagnostics(since)), contentType: "text/plain" });
  if (bundle === "on" || (bundle === "retain-on-failure" && failed(testInfo))) {
    const path = testInfo.outputPath("stack.qdbundle");
    await stack.save(path);
    await testInfo.attach("queue-devstack bundle", { path, contentType: "application/octet-stream" });
  }
}

/** On failure, what the wallet answered, in order. */
export async function attachWallet(wallet: TestWallet, testInfo: TestInfo): Promise<void> {
  if (failed(testInfo)) await testInfo.attach("queue-devstack wallet", { body: JSON.stringify(wallet.log, null, 2), contentType: "application/json" });
}
