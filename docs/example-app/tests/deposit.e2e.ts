import type { AccountKeys } from "queue-devstack/client";
import { expect, test } from "queue-devstack/playwright";
import { notesOf, openApp, paymentRequest } from "./app.ts";

// In order, on one worker's stack: the second test checks that the first one's deposit is gone.
test.describe.configure({ mode: "serial" });
let recipient: AccountKeys;

test("shows each wallet step while held, then the deposit confirmed", async ({ page, stack, wallet }) => {
  await openApp(page, stack);
  const request = paymentRequest(stack, 5_000_000n);
  recipient = request.keys;
  await wallet.hold();
  await page.getByLabel("Payment request").fill(request.text);
  await page.getByRole("button", { name: "Deposit" }).click();
  await expect(page.locator("#deposit")).toHaveText("Approval: confirm in your wallet…");
  expect(wallet.pending().map((held) => held.method)).toEqual(["eth_sendTransaction"]);
  await wallet.approve();
  await expect(page.locator("#deposit")).toHaveText("Deposit: confirm in your wallet…");
  await wallet.approve();
  await expect(page.locator("#deposit")).toHaveText(/^Deposit confirmed in block \d+\.$/);
  expect(await notesOf(stack, recipient)).toEqual([5_000_000n]); // the recipient's wallet finds its note
});

test("the next test finds the stack as it started", async ({ stack }) => {
  expect(await notesOf(stack, recipient)).toEqual([]);
});
