import { execFileSync } from "node:child_process";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { chromium, type Browser, type Page } from "playwright-core";
import { encodeFunctionData, formatUnits, parseAbi, type Address, type Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTION_ROUTES, type DevStack } from "../harness/index.ts";
import { operationHtml } from "../harness/dashboard/index.ts";
import { OPERATION_STATES } from "../src/schemas/operation-states.ts";
import type { OperationRecord } from "../src/store/types.ts";
import { createAccountKeys, prepareAction, type QueueClient } from "../harness/client/index.ts";
import { jsonRpc } from "../harness/chain/index.ts";
import { poolFixture, provenSend as provenSendOf } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { startRuntimeProcess } from "./support/runtime-process.ts";
import { withStacks } from "./support/stacks.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

/** The page's globals a predicate run in it reads (a function, not a string: the page's CSP forbids eval). */
type InPage = { document: { querySelector(selector: string): { children: { length: number } } | null } };

// The dev stack's dashboard in a real browser: Debian's chromium, headless, driven by playwright-core
// (never a downloaded browser build; .ci/run installs the package).
const tempDir = withTempDirs();
const startStack = withStacks();
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
  // In a context of its own: axe-core's runner opens pages in it.
  // The clipboard granted: a copy button's write is read back.
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 }, permissions: ["clipboard-read", "clipboard-write"] })).newPage();
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
/** Screenshots are the test's artifacts: in the git-ignored test-results/, never in the run's TMPDIR. */
const SCREENSHOTS = path.join(import.meta.dirname, "..", "test-results", "dashboard");
const open = async () => {
  await page.goto(`${stack.queueUrl}/api/dev/dashboard`);
  await page.getByText("live", { exact: true }).waitFor();
};
/** Submits one of the page's control forms (by its legend) with these fields, and waits for its answer. */
async function submitControl(legend: string, fields: Record<string, string>, option?: Record<string, string>) {
  const form = page.locator("form.control", { has: page.locator("legend", { hasText: legend }) });
  for (const [label, value] of Object.entries(fields)) await form.getByLabel(label).fill(value);
  for (const [label, value] of Object.entries(option ?? {})) await form.getByLabel(label).selectOption(value);
  await page.locator("#control-result").evaluate((el) => (el.textContent = ""));
  await form.getByRole("button").click();
  await page.locator("#control-result", { hasText: `${legend}: ` }).waitFor();
  return (await page.locator("#control-result").textContent()) as string;
}
/** Clicks one of the page's control buttons (by its name) and waits for its answer. */
async function clickControl(name: string) {
  await page.locator("#control-result").evaluate((el) => (el.textContent = ""));
  await page.getByRole("button", { name, exact: true }).click();
  await page.locator("#control-result", { hasText: `${name}: ` }).waitFor();
  return (await page.locator("#control-result").textContent()) as string;
}
/** What a person reads has no field name of the API (camelCase), no bare true or false, no 18 decimals. */
const INTERNAL = /\b[a-z]+[A-Z]\w*|\btrue\b|\bfalse\b|\d\.\d{5,}/;

/**
 * Every word shown on the page whose text is laid out over more than one line (a Range's client rects at two
 * heights): text nodes of the whole page, tables or not, open operations included.
 */
const brokenWords = () =>
  page.evaluate<string[]>(`(() => {
    const words = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.textContent.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (tops.size > 1) words.push(match[0] + " (in #" + (node.parentElement.closest("[id]")?.id ?? "") + ")");
      }
    }
    return words;
  })()`);
/** Every field whose placeholder is wider than the field shows it (the page's font, measured on a canvas). */
const placeholdersCut = () =>
  page.evaluate<string[]>(`[...document.querySelectorAll("input[placeholder]")].filter((input) => input.checkVisibility()).filter((input) => {
    const style = getComputedStyle(input), context = document.createElement("canvas").getContext("2d");
    context.font = style.font;
    const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return context.measureText(input.placeholder).width > room;
  }).map((input) => input.name + ": " + input.placeholder)`);
const head = () => jsonRpc<{ number: string; timestamp: string; hash: string }>(stack.rpcUrl, "eth_getBlockByNumber", ["latest", false]);

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
    // The time spent in each state but the last, as the store's history dates them.
    const { history } = await queue.status("send", sent.id);
    const spentIn = history.slice(0, -1).map((entry, i) => Date.parse(history[i + 1]?.at as string) - Date.parse(entry.at));
    expect(await page.locator(`#op-${sent.id} .timeline .spent`).allTextContents()).toEqual(spentIn.map((ms) => (ms < 1000 ? `${ms} ms in it` : `${(ms / 1000).toFixed(1)} s in it`)));
    // Its confirmations count up with the head, out of the relayer's required one: two more blocks mined, two more.
    // Counted up to the requirement, never past it ("15 of 1 confirmation" was).
    const confirmations = page.locator(`#op-${sent.id} .confirmations`);
    await confirmations.filter({ hasText: /^1 of 1 confirmation$/ }).waitFor(); // once the head it counts from is shown
    const shownHead = Number(await page.locator("#head-number").textContent());
    expect(await page.locator("#health dd", { has: page.locator("#head-number") }).textContent()).toMatch(/^block \d+, mined \d+ s ago$/); // a block mined since: its age
    await fetch(`${stack.queueUrl}/api/dev/mine`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ blocks: 2 }) });
    await page.locator("#head-number", { hasText: String(shownHead + 2) }).waitFor();
    await page.evaluate("new Promise((done) => setTimeout(done, 1100))"); // the page counts once a second
    expect(await confirmations.textContent()).toBe("1 of 1 confirmation");
    // What it asked for, in its entry: a send's amount is private, its nullifiers and asset are public.
    const payload = page.locator(`#op-${sent.id} .payload`);
    expect(await payload.locator("dt").allTextContents()).toEqual(["kind", "asset", "amount", "fee", "recipient", "nullifiers", "idempotency key"]);
    const asset = stack.manifest.assets.find((a) => a.address.toLowerCase() === first.transaction.publicInputs.asset.toLowerCase());
    expect(await payload.locator("dd").nth(1).textContent()).toContain(asset?.symbol);
    // Counts per state, and a search by the transaction's hash finds it alone.
    await page.locator('#ops-counts .count[data-state="confirmed"] .n').filter({ hasText: /^[1-9]/ }).waitFor();
    const minedHash = (await queue.status("send", sent.id)).transactionHash as string;
    await page.getByLabel("find").fill(minedHash);
    await page.getByLabel("find").press("Enter");
    await expect.poll(() => page.locator("#ops > .op:visible").evaluateAll((ops) => ops.map((op) => op.id))).toEqual([`op-${sent.id}`]);
    await page.getByLabel("find").fill("");
    await page.getByLabel("find").press("Enter");
    // The whole list again, its times told relative once settled (polled: a pushed update re-renders the
    // entry with its ISO time until the page's script tells it relative again).
    // Its age relative, the time itself on hover; its hash shortened, whole behind the copy button.
    const accepted = page.locator(`#op-${sent.id} summary time`);
    await expect.poll(() => accepted.textContent()).toMatch(/^\d+ s ago$/);
    expect(await accepted.getAttribute("title")).toBe(sent.createdAt);
    const attempt = (await queue.status("send", sent.id)).transactions[0]?.hash as string;
    const cell = page.locator(`#op-${sent.id} .attempts td`, { has: page.locator(`code[title="${attempt}"]`) });
    expect(await cell.locator("code").textContent()).toBe(`${attempt.slice(0, 10)}…${attempt.slice(-6)}`);
    await cell.getByRole("button", { name: `copy ${attempt}` }).click();
    await page.locator("#control-result", { hasText: `copied ${attempt.slice(0, 10)}…${attempt.slice(-6)}` }).waitFor();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(attempt);

    // Proven first: its note's deposit must be mined.
    const second = await provenSendOf(stack, pool, queue, 3);
    expect(await page.locator("#mining-held").isVisible()).toBe(false);
    await page.getByRole("button", { name: "hold mining" }).click();
    await page.locator("#mining-mode", { hasText: "hold" }).waitFor();
    await page.locator("#mining-held", { hasText: "Mining is held" }).waitFor(); // a banner, as the alternate configuration has
    const held = await queue.submit("send", second.config, second.transaction);
    await opEntry(held.id, "submitted").waitFor();
    expect((await queue.status("send", held.id)).state).toBe("submitted"); // held: nothing mines it
    // Its transaction dropped from its entry: the node forgets it, the relayer sends it again, still submitted.
    await page.locator(`#op-${held.id} summary`).click();
    await page.locator(`#op-${held.id}`).getByRole("button", { name: "drop its transaction" }).click();
    await page.locator("#control-result", { hasText: "dropped" }).waitFor();
    expect(await page.locator("#control-result").textContent()).toContain("drop its transaction: done");
    // Not mined after stuckAfterMs: the relayer bumps its fee, a second attempt with the same nonce and higher fees.
    const attempts = page.locator(`#op-${held.id} .attempts tbody tr`);
    await attempts.nth(1).waitFor();
    const [bumped, original] = [await attempts.nth(1).locator("td").allTextContents(), await attempts.nth(0).locator("td").allTextContents()];
    expect(bumped[1]).toBe(original[1]); // the nonce
    const wei = (row: number) => attempts.nth(row).locator("td").nth(2).locator("span").getAttribute("title");
    const fee = async (row: number) => BigInt(String(await wei(row)).split(" ")[0] as string);
    expect(await fee(1)).toBeGreaterThan(await fee(0));
    await page.getByRole("button", { name: "release mining" }).click();
    await opEntry(held.id, "confirmed").waitFor();
    await page.locator("#mining-mode", { hasText: "auto" }).waitFor();
    await page.locator("#mining-held").waitFor({ state: "hidden" });

    // Reset asks first: refused, nothing happens; accepted, the store goes back to the clean state, and the page's list with it.
    const dialogs: string[] = [];
    page.once("dialog", (dialog) => void (dialogs.push(dialog.message()), dialog.dismiss()));
    await page.getByRole("button", { name: "reset the stack" }).click();
    await page.locator("#control-result", { hasText: "reset the stack: not done" }).waitFor();
    expect(await page.locator(`#op-${sent.id}`).count()).toBe(1);
    page.once("dialog", (dialog) => void (dialogs.push(dialog.message()), dialog.accept()));
    await page.getByRole("button", { name: "reset the stack" }).click();
    expect(dialogs).toEqual([expect.stringContaining("Reset the stack"), expect.stringContaining("Reset the stack")]);
    await page.locator(`#op-${sent.id}`).waitFor({ state: "detached" });
    expect(await page.locator("#ops > .op").count()).toBe(0);
    await page.locator("#control-result", { hasText: "reset the stack: done, back at the clean state the stack started in" }).waitFor(); // not "reset true"
    // Back at the committed genesis's last block: dated 2026-01-01 whatever the day, said as genesis, not by its age ("mined 330 d ago" was).
    const headRow = page.locator("#health dd", { has: page.locator("#head-number") });
    await headRow.filter({ hasText: /^block 1, genesis \(its date fixed at 2026-01-01\)$/ }).waitFor();

    expect(await page.evaluate(() => (globalThis as unknown as { loadedOnce?: boolean }).loadedOnce)).toBe(true);
    expect(consoleErrors).toEqual([]);

    // Automine off while anvil mines every 2 s (a test's own evm_setIntervalMining) is said so, not as held.
    await jsonRpc(stack.rpcUrl, "evm_setIntervalMining", [2]);
    await page.reload(); // after the no-reload checks above
    await page.locator("#mining-mode", { hasText: "every 2 s" }).waitFor();
    expect(await page.locator("#mining-held").isVisible()).toBe(false);
    await jsonRpc(stack.rpcUrl, "evm_setIntervalMining", [0]);
    await jsonRpc(stack.rpcUrl, "evm_setAutomine", [true]);
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
    expect(await page.locator(`#op-${op.id} .failure .reason`).textContent()).toContain("InvalidProof()");
    // Said once in the whole entry (the timeline's last step said it again), and "reverted" once in its summary.
    expect((await page.locator(`#op-${op.id}`).textContent())?.match(/InvalidProof\(\)/g)).toHaveLength(1);
    expect((await page.locator(`#op-${op.id} summary`).textContent())?.match(/reverted/g)).toHaveLength(1);
    await page.locator(`#op-${op.id}`).getByRole("button", { name: "show its trace" }).click();
    await page.locator(`#trace-${op.id}`, { hasText: "InvalidProof()" }).waitFor();

    await page.getByRole("button", { name: "RPC fault: fail" }).click();
    await page.locator("#rpc-fault", { hasText: "fail" }).waitFor();
    await page.locator('#health .ready[data-ready="false"]').waitFor();
    // Why, once, and the checks as rows rather than JSON.
    const why = (await page.locator("#health dd", { has: page.locator(".ready") }).first().textContent()) as string;
    expect(why.match(/the chain did not answer/g), why).toHaveLength(1);
    expect(await page.locator("#health .checks dt").allTextContents()).toEqual(expect.arrayContaining(["chain", "relayer", "queue", "store", "engine"]));
    await page.getByRole("button", { name: "RPC fault: off" }).click();
    await page.locator("#rpc-fault", { hasText: "none" }).waitFor();
    expect(consoleErrors).toEqual([]);
  }, 120_000);

  it("reaches every dev control from its forms and buttons, each shown as on in the health and manifest panels", async () => {
    await open();
    await page.locator("#health .ready").waitFor();

    const before = Number((await head()).number);
    // Answers in plain words, each control's its own: not JSON, nor its field names.
    const answers: string[] = [];
    const said = (text: string) => (answers.push(text), text);
    expect(said(await submitControl("mine blocks", { blocks: "3" }))).toMatch(new RegExp(`^mine blocks: done, block ${before + 3} at \\d{4}-\\d\\d-\\d\\dT`));
    await page.locator("#head-number", { hasText: String(before + 3) }).waitFor();
    const earlier = Number((await head()).timestamp);
    expect(said(await submitControl("move time", { seconds: "7200" }))).toMatch(/^move time: done, block \d+ at \d{4}-/);
    expect(Number((await head()).timestamp)).toBeGreaterThanOrEqual(earlier + 7200);
    const top = await head();
    expect(said(await submitControl("reorg the last blocks", { depth: "1" }))).toMatch(/^reorg the last blocks: done, the last 1 block replaced, the head at block \d+ at \S+; no transaction to send again$/);
    expect((await head()).hash).not.toBe(top.hash); // same height, another block
    // The drop form answers the route's problem for an id it does not know.
    expect(await submitControl("drop an operation's transaction", { "operation id": "op_unknown" })).toBe("drop an operation's transaction: refused, 404 operation_not_found: no operation op_unknown");
    // The browser logs the refused request: expected here, and only here.
    const refused = consoleErrors.findIndex((text) => text.includes("404") && text.includes("/api/dev/drop"));
    expect(refused).toBeGreaterThanOrEqual(0);
    consoleErrors.splice(refused, 1);

    // An RPC fault limited to some methods and a duration, then switched off.
    expect(said(await submitControl("RPC fault", { methods: "eth_sendRawTransaction, eth_getLogs", "for (ms)": "600000" }, { fault: "fail" }))).toMatch(/^RPC fault: done, RPC fault fail on eth_sendRawTransaction, eth_getLogs, ends in (9|10) min$/);
    await page.locator("#rpc-fault-methods", { hasText: "eth_sendRawTransaction, eth_getLogs" }).waitFor();
    expect(await page.locator("#health dd", { has: page.locator("#rpc-fault") }).textContent()).toMatch(/, ends in (9|10) min$/); // until when: a time to come
    expect(said(await submitControl("RPC fault", { "delay (ms, for delay)": "5", methods: "", "for (ms)": "" }, { fault: "delay" }))).toBe("RPC fault: done, RPC fault delay 5 ms on every method, until switched off");
    await page.locator("#rpc-fault", { hasText: "delay" }).waitFor();
    expect(await page.locator("#health dd", { has: page.locator("#rpc-fault") }).textContent()).toBe("delay 5 ms");
    expect(said(await submitControl("RPC fault", { "delay (ms, for delay)": "" }, { fault: "none" }))).toBe("RPC fault: done, no RPC fault");
    await page.locator("#rpc-fault", { hasText: "none" }).waitFor();
    expect(said(await clickControl("revert next relay"))).toBe("revert next relay: done, the next relay will revert on chain (InvalidProof())");
    await page.locator("#revert-next", { hasText: "armed" }).waitFor();
    expect(said(await clickControl("disarm revert next"))).toBe("disarm revert next: done, the next relay is relayed as usual");
    await page.locator("#revert-next", { hasText: "off" }).waitFor();
    expect(said(await clickControl("hold mining"))).toMatch(/^hold mining: done, mining held, the head at block \d+ at \S+$/);
    expect(said(await clickControl("release mining"))).toMatch(/^release mining: done, mining automatic again, the head at block \d+ at \S+$/);

    // The relayer paused and resumed; its balance set, and back.
    expect(said(await clickControl("pause relayer"))).toMatch(/^pause relayer: done, relayer paused, balance (about )?\d+(\.\d{1,4})? ETH$/);
    await page.locator("#engine", { hasText: "paused" }).waitFor();
    expect(said(await clickControl("resume relayer"))).toMatch(/^resume relayer: done, relayer running, balance /);
    await page.locator("#engine", { hasText: "running" }).waitFor();
    // Not prefilled: a click on "set balance" with nothing typed posts nothing (it drained the relayer, at 0),
    // and the line under the controls no longer shows the previous control's answer (it did, as if this one's).
    const balanceForm = page.locator("form.control", { has: page.locator("legend", { hasText: "relayer balance" }) });
    expect(await balanceForm.getByLabel("ETH").inputValue()).toBe("");
    await balanceForm.getByRole("button").click();
    expect(await balanceForm.getByLabel("ETH").evaluate((input) => (input as unknown as { validity: { valueMissing: boolean } }).validity.valueMissing)).toBe(true);
    expect(await page.locator("#control-result").textContent()).toBe("");
    expect(said(await submitControl("relayer balance", { ETH: "1.5" }))).toBe("relayer balance: done, relayer running, balance 1.5 ETH");
    await page.locator("#relayer-balance", { hasText: "1.5000" }).waitFor();
    // A balance of 18 decimals is said to four, as the health panel shows it.
    expect(said(await submitControl("relayer balance", { ETH: "2.123456789012345678" }))).toBe("relayer balance: done, relayer running, balance about 2.1234 ETH");
    expect(said(await submitControl("relayer balance", { ETH: "10000" }))).toBe("relayer balance: done, relayer running, balance 10000 ETH");
    await page.locator("#relayer-balance", { hasText: "10000.0000" }).waitFor();

    // The served configuration switched: the manifest panel shows the other Pool and ETag, then the original's again.
    const etag = (await fetch(`${stack.queueUrl}/api/queue/config`)).headers.get("etag") as string;
    await page.locator(`#manifest-etag code[title='${etag}']`).waitFor();
    expect(said(await clickControl("serve the alternate configuration"))).toMatch(/^serve the alternate configuration: done, serving the alternate configuration, Pool 0x[0-9a-fA-F]{8}…[0-9a-fA-F]{6}$/);
    await page.locator("#serving", { hasText: "alternate" }).waitFor();
    const alternate = (await fetch(`${stack.queueUrl}/api/queue/config`)).headers.get("etag") as string;
    expect(alternate).not.toBe(etag);
    await page.locator(`#manifest-etag code[title='${alternate}']`).waitFor();
    // The Pool panel shows the served deployment; the list says it is of the stack's own one.
    const alternatePool = ((await (await fetch(`${stack.queueUrl}/api/queue/config`)).json()) as { poolAddress: string }).poolAddress;
    await page.locator(`#pool code[title="${alternatePool}"]`).waitFor();
    expect(await page.locator("#ops-scope").isVisible()).toBe(true);
    await page.getByRole("button", { name: "serve the original configuration" }).click();
    await page.locator(`#manifest-etag code[title='${etag}']`).waitFor();
    await page.locator("#ops-scope").waitFor({ state: "hidden" });
    expect(answers.filter((text) => INTERNAL.test(text))).toEqual([]);
    expect(consoleErrors).toEqual([]);
  }, 120_000);

  it("shows the Pool (leaves, roots, balances, fees, proof files) and the manifest, with 'add to wallet' calling the wallet", async () => {
    // A wallet in the page: it records what it is asked.
    await page.addInitScript(() => {
      const calls: unknown[] = [];
      (globalThis as unknown as { walletCalls: unknown[] }).walletCalls = calls;
      (globalThis as unknown as { ethereum: unknown }).ethereum = { request: async (args: unknown) => void calls.push(args) };
    });
    await open();
    const data = encodeFunctionData({ abi: parseAbi(["function nextIndex() view returns (uint32)"]), functionName: "nextIndex" });
    const leaves = Number(BigInt(await jsonRpc<string>(stack.rpcUrl, "eth_call", [{ to: stack.manifest.poolAddress, data }, "latest"])));
    expect(leaves).toBeGreaterThan(0);
    await page.locator("#pool-leaves").filter({ hasText: new RegExp(`^${leaves}$`) }).waitFor();
    // The roots a proof may use, as the Pool counts them: the last root's number in its history (rootNumber).
    const call = async (signature: string, name: string, args: unknown[] = []) =>
      BigInt(await jsonRpc<string>(stack.rpcUrl, "eth_call", [{ to: stack.manifest.poolAddress, data: encodeFunctionData({ abi: parseAbi([signature]), functionName: name, args } as never) }, "latest"]));
    const lastRoot = await call("function getLastRoot() view returns (uint256)", "getLastRoot");
    expect(Number(await page.locator("#pool-roots").textContent())).toBe(Number(await call("function rootNumber(uint256) view returns (uint32)", "rootNumber", [lastRoot])));
    await page.locator(`#pool code[title="0x${lastRoot.toString(16).padStart(64, "0")}"]`).first().waitFor({ state: "attached" });
    for (const artifact of stack.manifest.queue.proof.artifacts) await page.locator(`#pool code[title="${artifact.sha256}"]`).waitFor({ state: "attached" });
    // Each asset's row: the Pool's balance as its token says, and the send and withdraw fees of the manifest.
    const fees = stack.manifest.relayFees;
    for (const asset of stack.manifest.assets) {
      const balanceData = encodeFunctionData({ abi: parseAbi(["function balanceOf(address) view returns (uint256)"]), functionName: "balanceOf", args: [stack.manifest.poolAddress as Address] });
      const balance = BigInt(await jsonRpc<string>(stack.rpcUrl, "eth_call", [{ to: asset.address, data: balanceData }, "latest"]));
      const fee = fees.fees.find((f) => f.asset.toLowerCase() === asset.address.toLowerCase());
      const units = (value: string | bigint) => `${formatUnits(BigInt(value), asset.decimals)} ${asset.symbol}`;
      const cells = [asset.symbol, units(balance), fee ? units(fee.send) : "not relayed", fee ? units(fee.withdraw) : "not relayed"];
      await page.locator("#pool tr").filter({ has: page.locator("th", { hasText: new RegExp(`^${asset.symbol}$`) }) }).filter({ hasText: cells.slice(1).join("") }).first().waitFor();
    }
    // Each route's action and finalize fee, per asset.
    expect(fees.actions.length).toBeGreaterThan(0);
    for (const fee of fees.actions) {
      const asset = stack.manifest.assets.find((a) => a.address.toLowerCase() === fee.asset.toLowerCase());
      if (!asset) throw new Error(`no asset ${fee.asset}`);
      const units = (value: string) => `${formatUnits(BigInt(value), asset.decimals)} ${asset.symbol}`;
      await page.locator("#pool tr", { hasText: `${asset.symbol}${units(fee.action)}${units(fee.finalize)}` }).first().waitFor();
    }

    // The dev accounts, read when their panel is opened: each address with its ETH and token balances.
    await page.locator("#accounts-details summary").click();
    const rows = page.locator("#accounts tbody tr");
    await rows.first().waitFor();
    expect(await rows.count()).toBe(stack.accounts.length);
    const second = stack.accounts[1]?.address as Address;
    const row = page.locator("#accounts tbody tr", { has: page.locator(`code[title="${second}"]`) });
    const eth = BigInt(await jsonRpc<string>(stack.rpcUrl, "eth_getBalance", [second, "latest"]));
    expect(await row.locator("td").nth(1).textContent()).toBe(`${eth / 10n ** 18n}.${((eth % 10n ** 18n) / 10n ** 14n).toString().padStart(4, "0")}`);
    expect(await row.locator("th").textContent()).toBe("1 (anvil #2)"); // the relayer (anvil #1) is not a dev account
    expect(await page.locator("#accounts thead th").allTextContents()).toEqual(["account", "address", "ETH", ...stack.manifest.assets.map((a) => a.symbol)]);

    const served = await (await fetch(`${stack.queueUrl}/api/queue/config`)).text();
    await page.locator("#manifest summary").click();
    expect(JSON.parse((await page.locator("#manifest-json").textContent()) as string)).toEqual(JSON.parse(served));
    await page.getByRole("button", { name: "add to wallet" }).click();
    await page.locator("#manifest .wallet-status", { hasText: "added" }).waitFor();
    const { supportedChains } = (await (await fetch(`${stack.queueUrl}/api/queue/networks`)).json()) as { supportedChains: Array<{ addEthereumChainParameter: unknown }> };
    expect(await page.evaluate(() => (globalThis as unknown as { walletCalls: unknown[] }).walletCalls)).toEqual([{ method: "wallet_addEthereumChain", params: [supportedChains[0]?.addEthereumChainParameter] }]);
    expect(consoleErrors).toEqual([]);
  }, 60_000);
  it("an action shows its reservation and that reservation's state, with a link to its finalize; the filters narrow the list", async () => {
    await open();
    const keys = createAccountKeys();
    const config = await queue.beforePrepare();
    const weth = stack.manifest.assets.find((a) => a.decimals === 18)?.address as Address;
    const quote = await queue.quote(config, { route: ACTION_ROUTES.swap, assetIn: pool.asset, assetOut: weth, amountIn: pool.usdc("30") });
    const { state, input } = await pool.fundedNote(5, keys, pool.usdc("31"));
    const prepared = await prepareAction({ config, quote, prover: pool.prover, tree: state.tree, keys, inputs: [input] });
    const acted = await queue.waitFor("withdraw", (await queue.submitAction(config, prepared)).id);
    await opEntry(acted.id, "confirmed").waitFor();
    expect(await page.locator(`#op-${acted.id} .kind`).textContent()).toBe("action");
    const finalize = await queue.waitFor("withdraw", (await queue.finalize(config, acted.action?.reservationId as Hex)).id);
    await opEntry(finalize.id, "confirmed").waitFor();

    // Opened, the action reads its reservation from the Pool: finalized, by the finalize operation.
    await page.locator(`#op-${acted.id} summary`).click();
    const reservation = page.locator(`#op-${acted.id} .reservation`);
    await reservation.locator('.state[data-state="finalized"]').waitFor();
    expect(await reservation.locator("code").first().getAttribute("title")).toBe(acted.action?.reservationId);
    await reservation.getByRole("link", { name: finalize.id }).click();
    expect(await page.locator(`#op-${finalize.id}`).evaluate((el) => (el as unknown as { open: boolean }).open)).toBe(true);
    // The finalize links back to its action (found by the reservation's output note in the store).
    await page.locator(`#op-${finalize.id} .reservation`).getByRole("link", { name: acted.id }).waitFor();
    // The Pool panel's reservations, pushed as the finalize was mined.
    await page.locator("#pool tr", { has: page.getByRole("link", { name: finalize.id }) }).locator('.state[data-state="finalized"]').waitFor();

    // Filters: on the server for the list, on the page for what is pushed.
    const visible = () => page.locator("#ops > .op:visible");
    await page.getByLabel("kind").selectOption("finalize");
    await page.locator(`#op-${acted.id}`).waitFor({ state: "detached" });
    expect(await visible().evaluateAll((ops) => ops.map((op) => op.id))).toEqual([`op-${finalize.id}`]);
    await page.getByLabel("kind").selectOption("");
    await page.getByLabel("state").selectOption("reverted");
    await page.locator(`#op-${finalize.id}`).waitFor({ state: "detached" });
    expect(await visible().evaluateAll((ops) => ops.map((op) => op.dataset.state))).toEqual(["reverted"]);
    await page.getByLabel("state").selectOption("");
    await page.getByLabel("since").selectOption("60");
    await page.locator(`#op-${acted.id}`).waitFor();
    await page.getByLabel("since").selectOption("");
    expect(consoleErrors).toEqual([]);
  }, 120_000);

  it("has no accessibility violation (axe-core) with every operation open, and fits 1280x800 and a phone's width", async () => {
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.setViewportSize({ width: 1280, height: 800 });
    await open();
    await page.locator("#ops > .op").first().waitFor();
    await page.locator("#pool-leaves").waitFor();
    // Every operation open, several with signed attempts: each adds its own region ("landmark-unique" was).
    for (const summary of await page.locator("#ops > .op summary").all()) await summary.click();
    expect(await page.locator("#ops .attempts").count()).toBeGreaterThanOrEqual(2);
    // With what an entry shows when asked (its trace, its replay), the accounts and the manifest's JSON.
    for (const button of await page.locator("#ops > .op").getByRole("button", { name: /^(show its trace|replay)$/ }).all()) await button.click();
    await expect.poll(() => page.locator("#ops .trace:empty, #ops .replay-answer:empty").count()).toBe(0);
    await page.locator("#accounts-details summary").click();
    await page.locator("#accounts tbody tr").first().waitFor();
    await page.locator("#manifest summary").click();
    const violations = (await new AxeBuilder({ page }).analyze()).violations;
    expect(violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
    expect(await brokenWords()).toEqual([]);
    expect(await placeholdersCut()).toEqual([]);
    // Each state's colour shown once above the list: the counts are its legend (a legend line repeated them).
    await page.locator("#ops-counts .count .n").first().waitFor();
    const badges = await page.locator("#ops-panel .state").evaluateAll((all) => all.filter((b) => !b.closest("#ops")).map((b) => b.getAttribute("data-state")));
    expect(badges).toEqual([...OPERATION_STATES]);
    await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard-1280x800.png") });
    await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard-1280-full.png"), fullPage: true });

    await page.setViewportSize({ width: 390, height: 844 });
    // Nothing wider than the phone's screen: no sideways scrolling of the page (a wide table, a trace, scrolls in its own region).
    const wider = await page.evaluate<string[]>("[...document.querySelectorAll('body *')].filter((e) => !e.closest('.table-scroll > *, pre > *') && e.getBoundingClientRect().right > 391).map((e) => e.tagName + '.' + e.className + '#' + e.id + ' ' + Math.round(e.getBoundingClientRect().right))");
    expect(wider).toEqual([]);
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    // No word anywhere on the page is broken across lines (the Manifest's Pool address and ETag were; "dUSD|C",
    // "verifi|catio|nKey" in the Pool's tables before them), at the phone's width as at the desktop's.
    expect(await brokenWords()).toEqual([]);
    expect(await placeholdersCut()).toEqual([]);
    const phone = (await new AxeBuilder({ page }).analyze()).violations;
    expect(phone.map((v) => v.id)).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard-390x844.png") });
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(consoleErrors).toEqual([]);
  }, 60_000);

  it("saves a repro bundle from the page that loads with --load; a page's open push channel does not hold that stack's stop", async () => {
    await open();
    await page.locator("#ops > .op").first().waitFor();
    const ops = await page.locator("#ops > .op").evaluateAll((entries) => entries.map((op) => op.id.slice(3)));
    expect(ops.length).toBeGreaterThan(0);
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "save a repro bundle" }).click()]);
    expect(download.suggestedFilename()).toBe("repro.qdbundle");
    const file = path.join(await tempDir("dashboard-bundle-"), "repro.qdbundle");
    await download.saveAs(file);
    const loaded = await startStack({ load: file });
    expect(loaded.manifest.poolAddress).toBe(stack.manifest.poolAddress);
    for (const id of ops) expect((await fetch(`${loaded.queueUrl}/api/queue/withdraw-status?id=${id}`)).status === 200 || (await fetch(`${loaded.queueUrl}/api/queue/send-status?id=${id}`)).status === 200, id).toBe(true);

    const response = await fetch(`${loaded.queueUrl}/api/dev/events`);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toMatch(/^event: ops\n/);
    await loaded.stop(); // hangs (the test times out) if the stream kept the server open
    // The stream ends (whatever was still on its way, health say, comes first).
    while (!(await reader.read()).done);
  }, 90_000);

  it("keeps at most 100 pushed entries: a burst of pushes lets the oldest go behind an 'older operations' button that pages them back from the store", async () => {
    await open();
    await page.waitForFunction(() => ((globalThis as unknown as InPage).document.querySelector("#ops")?.children.length ?? 0) > 0); // the stored list's first page ("no operation yet" if run alone)
    const stored = await page.locator("#ops > .op").evaluateAll((entries) => entries.map((op) => op.id));
    // 120 pushes as the channel sends them (an operation's entry each), newer than everything stored; not in the store.
    const now = Date.now();
    const pushed = Array.from({ length: 120 }, (_, i) => {
      const at = new Date(now + i).toISOString();
      const op = { id: `op_burst${String(i).padStart(3, "0")}`, kind: "send", state: "accepted", request: {}, nullifiers: [], idempotencyKey: null, history: [{ state: "accepted", at }], attempts: [], reason: null, minedHash: null, block: null, createdAt: at, updatedAt: at };
      return operationHtml(op as unknown as OperationRecord, "/api/dev", 1);
    });
    await page.evaluate(`${JSON.stringify(pushed)}.forEach((data) => document.dispatchEvent(new CustomEvent("htmx:sseBeforeMessage", { detail: { type: "op", data }, cancelable: true })))`);
    await page.locator("#op-op_burst119").waitFor({ state: "attached" });
    const shown = await page.locator("#ops > .op").evaluateAll((entries) => entries.map((op) => op.id));
    expect(shown).toEqual(Array.from({ length: 100 }, (_, i) => `op-op_burst${String(119 - i).padStart(3, "0")}`));
    // The button pages from the last one kept: the 20 let go are not in the store, so the stored ones come next.
    const [older] = await Promise.all([page.waitForResponse((response) => response.url().includes("before=")), page.getByRole("button", { name: "older operations" }).click()]);
    expect(new URL(older.url()).searchParams.get("before")).toMatch(/ op_burst020$/);
    await page.waitForFunction(() => !(globalThis as unknown as InPage).document.querySelector("#ops > button.older[hx-get*=op_burst]"));
    expect((await page.locator("#ops > .op").evaluateAll((entries) => entries.map((op) => op.id))).slice(100)).toEqual(stored);
    expect(consoleErrors).toEqual([]);
  }, 60_000);

  it("a page of another site cannot reset the stack or drive a control, even with no body (403 cross_origin_refused)", async () => {
    await jsonRpc(stack.rpcUrl, "anvil_mine", ["0x1"]); // ahead of the clean state: a reset would go back
    const before = Number((await head()).number);
    // Chromium also refuses a plain-http public page's request to loopback (its Local Network Access check):
    // that is Chromium's alone, and an https page is only asked for permission. Off here, so the stack's own check is what is tested.
    const otherBrowser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-features=LocalNetworkAccessChecks"] });
    try {
      const other = await otherBrowser.newPage();
      // A page of another site (served by the test, not fetched): its requests to the stack are a browser's own.
      await other.route("http://evil.example/**", (route) => route.fulfill({ contentType: "text/html", body: "<!doctype html><title>another site</title>" }));
      await other.goto("http://evil.example/");
      for (const [path, init] of [
        ["reset", { method: "POST", mode: "no-cors" }],
        ["mine", { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: '{"blocks":5}' }],
      ] as const) {
        const answered = other.waitForResponse((response) => response.url().endsWith(`/api/dev/${path}`));
        await other.evaluate(`fetch(${JSON.stringify(`${stack.queueUrl}/api/dev/${path}`)}, ${JSON.stringify(init)}).catch(() => {})`);
        const response = await answered;
        expect(response.status(), path).toBe(403);
        expect(await response.request().headerValue("origin")).toBe("http://evil.example");
      }
    } finally {
      await otherBrowser.close();
    }
    expect(Number((await head()).number)).toBe(before);
  }, 60_000);

  it("refuses a bad list or reservation query with a problem; an operator's runtime serves no dashboard and no push channel (404)", async () => {
    for (const [query, code] of [["ops?kind=bogus", "invalid_request"], ["ops?since=-1", "invalid_request"], ["ops?extra=1", "invalid_request"], ["ops?before=x", "invalid_request"], ["reservation?id=op_unknown", "operation_not_found"]]) {
      const refused = await fetch(`${stack.queueUrl}/api/dev/dashboard/${query}`);
      expect(refused.headers.get("content-type"), query).toMatch(/^application\/problem\+json/);
      expect(((await refused.json()) as { code: string }).code, query).toBe(code);
    }
    const { url, child } = await startRuntimeProcess(stack, ["--store", ":memory:"]);
    try {
      for (const path of ["/api/dev/dashboard", "/api/dev/events", "/api/dev/dashboard/assets/htmx.min.js", "/api/dev/dashboard/ops", "/api/dev/dashboard/reservation?id=op_1"]) {
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
