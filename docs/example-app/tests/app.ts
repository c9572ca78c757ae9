// What the tests share: opening the app on the test's stack, and what the user's other device does
// (a payment request, finding its notes) with queue-devstack/client.
import type { Page } from "@playwright/test";
import { createAccountKeys, encryptNote, findNotes, precommitmentOf, randomFieldElement, syncPool, type AccountKeys } from "queue-devstack/client";
import { expect, type DevStack } from "queue-devstack/playwright";
import { createPublicClient, http, type Address } from "viem";

/** The app on this test's stack (its server's URL comes from playwright.config.ts's webServer). */
export async function openApp(page: Page, stack: DevStack, { connect = true } = {}): Promise<void> {
  await page.goto(`${process.env.EXAMPLE_APP_URL}?queue=${encodeURIComponent(stack.queueUrl)}`);
  await expect(page.locator("#deployment")).toHaveText(/^Deployment as reviewed/);
  if (!connect) return;
  await page.getByRole("button", { name: /^Connect queue-devstack test wallet/ }).click();
  await expect(page.locator("#wallet")).toHaveText(/^Connected 0x/);
}

/** A payment request, as the recipient's wallet makes it: the note's secrets stay there, the page gets its precommitment and ciphertext. */
export function paymentRequest(stack: DevStack, amount: bigint): { keys: AccountKeys; text: string } {
  const keys = createAccountKeys();
  const asset = stack.manifest.assets[0]!.address as Address; // dUSDC, 6 decimals: every dev account holds some
  const note = { amount, asset, ownerPublicKey: keys.notePublicKey, blinding: randomFieldElement() };
  const request = { asset, amount: String(amount), precommitment: String(precommitmentOf(note)), encryptedOutput: encryptNote(note, keys.encryption.publicKey) };
  return { keys, text: JSON.stringify(request) };
}

/** The amounts of the notes `keys` owns in the stack's Pool, as the recipient's wallet finds them. */
export async function notesOf(stack: DevStack, keys: AccountKeys): Promise<bigint[]> {
  const { poolAddress, deploymentBlock, domain, queue } = stack.manifest;
  const client = createPublicClient({ transport: http(stack.rpcUrl) });
  const state = await syncPool({ client, pool: poolAddress as Address, fromBlock: BigInt(deploymentBlock), levels: queue.proof.treeDepth });
  return findNotes(keys, state, BigInt(domain)).map((owned) => owned.note.amount);
}

/** A dev control (docs/dev-controls.md), as `npx queue-devstack ctl` sends it. */
export async function dev(stack: DevStack, path: string, body: unknown): Promise<void> {
  const response = await fetch(`${stack.queueUrl}/api/dev/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(response.status, await response.text()).toBe(200);
}

/** Tracks an operation the way a person does: its id, pasted from their other device. */
export async function track(page: Page, id: string, kind: string): Promise<void> {
  await page.getByLabel("Operation", { exact: true }).fill(id);
  await page.getByLabel("Route").selectOption(kind);
  await page.getByRole("button", { name: "Track" }).click();
}

/** The state the page shows for an operation. */
export const stateOf = (page: Page, id: string) => page.getByRole("row", { name: id }).getByRole("cell").nth(2);
