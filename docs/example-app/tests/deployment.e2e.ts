import { expect, test } from "queue-devstack/playwright";
import { openApp } from "./app.ts";

test("checks every proof file against the configuration's hashes", async ({ page, stack }) => {
  await openApp(page, stack, { connect: false });
  await page.getByRole("button", { name: "Check proof files" }).click();
  await expect(page.locator("#files")).toHaveText("3 proof files match the configuration's hashes.");
});

test("refuses a proof file that is not the one the configuration names", async ({ page, stack }) => {
  const wasm = `${stack.queueUrl}/api/queue/artifacts/joinsplit.wasm`;
  await page.route(wasm, (route) => route.fulfill({ body: "not the reviewed witness generator", headers: { "access-control-allow-origin": "*" } }));
  await openApp(page, stack, { connect: false });
  await page.getByRole("button", { name: "Check proof files" }).click();
  await expect(page.locator("#files")).toHaveText("joinsplit.wasm does not match its hash in the configuration: refusing to prove with it.");
});

test("refuses a runtime that serves a deployment it has not reviewed (rule 6)", async ({ page, stack }) => {
  await stack.faults.serve("alternate"); // another Pool: the stack's reset puts the original back
  await page.goto(`${process.env.EXAMPLE_APP_URL}?queue=${encodeURIComponent(stack.queueUrl)}`);
  await expect(page.locator("#deployment")).toHaveText(/^Refused: the runtime serves a deployment you have not reviewed \(poolAddress, /);
  await expect(page.getByRole("button", { name: "Deposit" })).toBeDisabled();
});
