import { execFileSync } from "node:child_process";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevStack, type DevStack } from "../harness/index.ts";
import type { QueueClient } from "../harness/client/index.ts";
import { poolFixture, provenSend as provenSendOf } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { startRuntimeProcess } from "./support/runtime-process.ts";

// The dev stack's dashboard in a real browser: Debian's chromium, headless, driven by playwright-core
// (never a downloaded browser build; .ci/run installs the package).
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let queue: QueueClient;
withQueueStack({}, (s) => ({ stack, pool, queue } = s));

const executablePath = process.env.CHROMIUM_PATH ?? execFileSync("sh", ["-c", "command -v chromium || true"], { encoding: "utf8" }).trim();
let browser: Browser | undefined;
let page: Page;
const consoleErrors: string[] = [];

beforeAll(async () => {
  if (!executablePath) throw new Error("no chromium on PATH: apt-get install chromium (see the README's contributing notes), or set CHROMIUM_PATH");
  // --no-sandbox: CI runs as root, where chromium's sandbox refuses to start.
  browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox"] });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  // A step that never shows fails with its own name, well inside the test's timeout.
  page.setDefaultTimeout(30_000);
  page.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(`${message.text()} (${message.location().url})`);
  });
  page.on("pageerror", (error) => consoleErrors.push(error.message));
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

const opEntry = (id: string, state: string) => page.locator(`#op-${id}[data-state="${state}"]`);

describe("dashboard", () => {
  it("loads with no console error and shows a relayed send reaching confirmed, then a held one stopping at submitted until release, without a reload", async () => {
    await page.goto(`${stack.queueUrl}/api/dev/dashboard`);
    await page.getByText("live", { exact: true }).waitFor();
    // Set once: a reload would lose it.
    await page.evaluate(() => ((globalThis as unknown as { loadedOnce: boolean }).loadedOnce = true));
    await page.locator("#health .ready").waitFor();

    const first = await provenSendOf(stack, pool, queue, 2);
    const sent = await queue.submit("send", first.config, first.transaction);
    await opEntry(sent.id, "confirmed").waitFor();
    // Its timeline: accepted first, confirmed last, and the attempt that was signed.
    await page.locator(`#op-${sent.id} summary`).click();
    expect(await page.locator(`#op-${sent.id} .timeline .state`).allTextContents()).toEqual(expect.arrayContaining(["accepted", "submitted", "confirmed"]));
    expect(await page.locator(`#op-${sent.id} .attempts tbody tr`).count()).toBeGreaterThanOrEqual(1);

    // Proven first: its note's deposit must be mined.
    const second = await provenSendOf(stack, pool, queue, 3);
    await page.getByRole("button", { name: "hold mining" }).click();
    await page.locator("#mining-mode", { hasText: "hold" }).waitFor();
    const held = await queue.submit("send", second.config, second.transaction);
    await opEntry(held.id, "submitted").waitFor();
    expect((await queue.status("send", held.id)).state).toBe("submitted"); // held: nothing mines it
    await page.getByRole("button", { name: "release mining" }).click();
    await opEntry(held.id, "confirmed").waitFor();
    await page.locator("#mining-mode", { hasText: "auto" }).waitFor();

    // Reset: the store goes back to the clean state, and the page's list with it.
    await page.getByRole("button", { name: "reset the stack" }).click();
    await page.locator(`#op-${sent.id}`).waitFor({ state: "detached" });
    expect(await page.locator("#ops > .op").count()).toBe(0);

    expect(await page.evaluate(() => (globalThis as unknown as { loadedOnce?: boolean }).loadedOnce)).toBe(true);
    expect(consoleErrors).toEqual([]);
  }, 120_000);

  it("shows a relay reverted by 'revert next relay' with InvalidProof() in its trace, and an RPC fault in the health panel", async () => {
    await page.goto(`${stack.queueUrl}/api/dev/dashboard`);
    await page.getByText("live", { exact: true }).waitFor();
    const { config, transaction } = await provenSendOf(stack, pool, queue, 4);
    await page.getByRole("button", { name: "revert next relay" }).click();
    await page.locator("#revert-next", { hasText: "armed" }).waitFor();
    const op = await queue.submit("send", config, transaction);
    await opEntry(op.id, "reverted").waitFor();
    await page.locator(`#op-${op.id} summary`).click();
    expect(await page.locator(`#op-${op.id} .failure .code`).textContent()).toBe("reverted");
    await page.locator(`#op-${op.id}`).getByRole("button", { name: "show its trace" }).click();
    await page.locator(`#trace-${op.id}`, { hasText: "InvalidProof()" }).waitFor();

    await page.getByRole("button", { name: "RPC fault: fail" }).click();
    await page.locator("#rpc-fault", { hasText: "fail" }).waitFor();
    await page.locator('#health .ready[data-ready="false"]').waitFor();
    await page.getByRole("button", { name: "RPC fault: off" }).click();
    await page.locator("#rpc-fault", { hasText: "none" }).waitFor();
    expect(consoleErrors).toEqual([]);
  }, 120_000);

  it("a page's open push channel does not hold the stack's stop", async () => {
    const other = await startDevStack({});
    try {
      const response = await fetch(`${other.queueUrl}/api/dev/events`);
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toMatch(/^event: ops\n/);
      await other.stop(); // hangs (the test times out) if the stream kept the server open
      // The stream ends (whatever was still on its way, health say, comes first).
      while (!(await reader.read()).done);
    } finally {
      await other.stop();
    }
  }, 60_000);

  it("an operator's runtime serves no dashboard and no push channel (404)", async () => {
    const { url, child } = await startRuntimeProcess(stack, ["--store", ":memory:"]);
    try {
      for (const path of ["/api/dev/dashboard", "/api/dev/events", "/api/dev/dashboard/assets/htmx.min.js"]) {
        const response = await fetch(`${url}${path}`);
        expect(response.status, path).toBe(404);
        expect(((await response.json()) as { code: string }).code).toBe("route_not_found");
      }
    } finally {
      child.kill("SIGTERM");
      await child;
    }
  }, 60_000);
});
