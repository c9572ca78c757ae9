import { expect, test } from "queue-devstack/playwright";
import { openApp, paymentRequest } from "./app.ts";

test("connects the wallet it finds by EIP-6963", async ({ page, stack, wallet }) => {
  await openApp(page, stack);
  await expect(page.locator("#wallet")).toHaveText(`Connected ${wallet.address} on 0xaa36a7.`);
});

test("asks for no signature while the wallet is on another chain (§4.2), then switches it back", async ({ page, stack, wallet }) => {
  await openApp(page, stack);
  await wallet.switchChain(1); // a person whose wallet is on mainnet
  await expect(page.locator("#wallet")).toHaveText(/^Your wallet is on chain 0x1: switch it to Sepolia/);
  await page.getByLabel("Payment request").fill(paymentRequest(stack, 1_000_000n).text);
  await page.getByRole("button", { name: "Deposit" }).click();
  await expect(page.locator("#deposit")).toHaveText(/^Your wallet is on chain 0x1/);
  expect(wallet.log.map((entry) => entry.method)).not.toContain("eth_sendTransaction");
  await page.getByRole("button", { name: "Switch network" }).click();
  await expect(page.locator("#wallet")).toHaveText(`Connected ${wallet.address} on 0xaa36a7.`);
});

test("shows the person's rejection", async ({ page, stack, wallet }) => {
  await openApp(page, stack);
  await wallet.hold();
  await page.getByLabel("Payment request").fill(paymentRequest(stack, 1_000_000n).text);
  await page.getByRole("button", { name: "Deposit" }).click();
  await expect(page.locator("#deposit")).toHaveText("Approval: confirm in your wallet…");
  await wallet.reject();
  await expect(page.locator("#deposit")).toHaveText("You rejected the request in your wallet.");
});
