import { expect, test } from "../harness/vitest/index.ts";

// anvil keeps impersonations across a revert, auto-impersonation too. Before the fix, the fixtures
// stopped the accounts impersonated through testClient, but not anvil_autoImpersonateAccount: after
// the first test turned it on, the next one could send from any address it did not own.
const stranger = "0x00000000000000000000000000000000c0ffee00" as const;
const sendFromStranger = (rpcUrl: string) =>
  fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_sendTransaction", params: [{ from: stranger, to: stranger, value: "0x0" }] }),
  }).then(async (response) => (await response.json()) as { result?: string; error?: { message: string } });

test("a test turns auto-impersonation on through testClient", async ({ testClient, stack }) => {
  await testClient.request({ method: "anvil_autoImpersonateAccount", params: [true] } as never);
  await testClient.setBalance({ address: stranger, value: 10n ** 18n });
  expect((await sendFromStranger(stack.rpcUrl)).result).toMatch(/^0x/);
});

test("the next test starts without it", async ({ stack, testClient }) => {
  await testClient.setBalance({ address: stranger, value: 10n ** 18n }); // funded: only the impersonation is missing
  expect((await sendFromStranger(stack.rpcUrl)).error).toBeDefined();
});
