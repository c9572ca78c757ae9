import { execFileSync } from "node:child_process";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { readdirSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import type { FastifyInstance } from "fastify";
import { chromium, type Browser, type Page } from "playwright-core";
import { closeProvers, createQueueClient, reviewedFrom, type PreparedTransaction } from "../../harness/client/index.ts";
import { startDevStack, type DevStack } from "../../harness/index.ts";
import { relayControl, type RelayControl } from "../../src/relay/control.ts";
import { poolFixture } from "../../test/support/pool.ts";
import { depositedNotes, nodeCpuMs, QueuePathError, queueBurst, sendFee } from "./relay-load.ts";
import { cpuMs, median, percentile } from "./stats.ts";

// The dashboard's costs, in one run on one local stack (automine) and Debian's chromium (headless,
// driven by playwright-core as test/dashboard.test.ts does):
// 1. its weight: the bytes of a first load of GET /api/dev/dashboard with its assets, and of the push
//    channel's first message (the operation list), on an empty store and again after the load;
// 2. the time from a state change committed in the store to the page showing it: the store's change
//    listener (RelayControl.onChange) stamps each committed (operation, state) on this process's clock, a
//    MutationObserver in the page stamps the moment that operation's entry shows that state (in the DOM,
//    and at the next animation frame), both wall clocks of this machine, the offset between them measured;
// 3. the runtime's request rate and CPU during a relay load like bench:relay's (bursts of N private
//    sends, each client polling its status until confirmed) with no page open against with the page
//    open, BENCH_ROUNDS bursts of each, alternating, medians compared.
// Proofs are the slow part (2 s or more each), so N are made once, and the stack is reverted to its
// snapshot after the deposits before every burst: each burst relays the same N sends on the same chain
// and an empty store (the page's list with it), which also keeps the bursts alike.
const N = Number(process.env.BENCH_RELAYS ?? 12);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SINGLE = Number(process.env.BENCH_SINGLE ?? 8);
for (const [name, value] of [["BENCH_RELAYS", N], ["BENCH_ROUNDS", ROUNDS], ["BENCH_SINGLE", SINGLE]] as const) {
  if (!Number.isInteger(value) || value < (name === "BENCH_SINGLE" ? 0 : 1)) {
    console.error(`${name} must be a ${name === "BENCH_SINGLE" ? "non-negative" : "positive"} integer, got ${process.env[name]}`);
    process.exit(2);
  }
}
const POLL = { intervalMs: 50, timeoutMs: 120_000 }; // as bench:relay's clients
const SINGLE_POLL = { intervalMs: 10, timeoutMs: 120_000 };
const DASHBOARD = "/api/dev/dashboard";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** After opening or leaving the page, before a window: the browser's own load or teardown stays out of it. */
const SETTLE_MS = 300;
const ms = (x: number) => `${x.toFixed(1)} ms`;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
/** This process's wall clock with sub-millisecond resolution, as a page's performance.timeOrigin + now(). */
const clock = () => performance.timeOrigin + performance.now();

/** The CPU (ms) chromium's processes (this process's descendants named chrom*) have used so far. */
function chromiumCpuMs(): number {
  const parent = new Map<number, number>();
  const names = new Map<number, string>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      names.set(Number(entry), stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")));
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const descends = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === process.pid) return true;
    return false;
  };
  let total = 0;
  for (const [pid, name] of names) if (name.startsWith("chrom") && descends(pid)) total += cpuMs(pid) ?? 0;
  return total;
}

/** HTTP requests the runtime has answered so far, by its own count (/metrics; its own scrapes left out). */
async function requestsAnswered(queueUrl: string): Promise<number> {
  const text = await (await fetch(`${queueUrl}/metrics`)).text();
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("queue_http_requests_total{") && !line.includes('route="/metrics"')) total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}

/** The push channel's first message (what a connecting page gets first: its list), in bytes. */
async function firstMessageBytes(queueUrl: string): Promise<{ bytes: number; name: string; ops: number }> {
  const abort = new AbortController();
  try {
    const response = await fetch(`${queueUrl}/api/dev/events`, { signal: abort.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let received = Buffer.alloc(0);
    for (let end = -1; end < 0; end = received.indexOf("\n\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the push channel ended before its first message");
      received = Buffer.concat([received, value]);
    }
    const message = received.subarray(0, received.indexOf("\n\n") + 2);
    const text = message.toString();
    return { bytes: message.length, name: /^event: (.*)$/m.exec(text)?.[1] ?? "message", ops: (text.match(/<details id="op-/g) ?? []).length };
  } finally {
    abort.abort();
  }
}

/** A first load of the page in a fresh browser context (nothing cached): every finished request's bytes. */
async function pageWeight(browser: Browser, queueUrl: string) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    const finished: Array<Promise<{ url: string; bytes: number; body: number; gzip: number }>> = [];
    page.on("requestfinished", (request) =>
      finished.push(
        (async () => {
          const sizes = await request.sizes();
          const body = (await (await request.response())?.body()) ?? Buffer.alloc(0);
          return { url: request.url(), bytes: sizes.responseHeadersSize + sizes.responseBodySize + sizes.requestHeadersSize, body: sizes.responseBodySize, gzip: gzipSync(body).length };
        })(),
      ),
    );
    await page.goto(`${queueUrl}${DASHBOARD}`);
    await page.getByText("live", { exact: true }).waitFor();
    await page.locator("#health .ready").waitFor();
    await sleep(SETTLE_MS); // what the first messages made it fetch (a list, say) finishes too
    const requests = await Promise.all(finished);
    return { requests, total: requests.reduce((n, r) => n + r.bytes, 0), body: requests.reduce((n, r) => n + r.body, 0), gzip: requests.reduce((n, r) => n + r.gzip, 0) };
  } finally {
    await context.close();
  }
}

/**
 * Set up in every document the page loads (plain JS: it runs in the page): the first moment each
 * operation's entry shows each state, in the DOM (the observer runs right after the swap, before any
 * paint) and at the next animation frame, as globalThis.shownStates["<id>|<state>"] = [dom, frame].
 */
const RECORD_SHOWN_STATES = `
(() => {
  const seen = (globalThis.shownStates = {});
  new MutationObserver((records) => {
    const at = performance.timeOrigin + performance.now();
    const fresh = [];
    const mark = (node) => {
      if (node.nodeType !== 1 || !node.isConnected) return;
      for (const entry of [node, ...node.querySelectorAll("details.op")]) {
        if (!entry.matches("details.op")) continue;
        const key = entry.id.slice("op-".length) + "|" + entry.dataset.state;
        if (!(key in seen)) {
          seen[key] = [at, null];
          fresh.push(key);
        }
      }
    };
    for (const record of records) {
      if (record.type === "attributes") mark(record.target);
      else record.addedNodes.forEach(mark);
    }
    if (fresh.length > 0) {
      requestAnimationFrame(() => {
        const frame = performance.timeOrigin + performance.now();
        for (const key of fresh) seen[key][1] = frame;
      });
    }
  }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-state"] });
})();
`;

/** The page's clock minus this process's (ms), from the round trip that bounds it best. */
async function clockOffset(page: Page): Promise<{ offset: number; within: number }> {
  let best = { offset: 0, within: Infinity };
  for (let i = 0; i < 20; i++) {
    const t0 = clock();
    const there = await page.evaluate(() => performance.timeOrigin + performance.now());
    const t1 = clock();
    if ((t1 - t0) / 2 < best.within) best = { offset: there - (t0 + t1) / 2, within: (t1 - t0) / 2 };
  }
  return best;
}

// The dev stack exposes no RelayControl; the runtime is built in this process, so its Fastify instance
// is caught from Fastify's own diagnostics channel as it is created, and the control read from it.
const apps: FastifyInstance[] = [];
const onFastify = (message: unknown) => void apps.push((message as { fastify: FastifyInstance }).fastify);

let stack: DevStack | undefined;
let browser: Browser | undefined;
let unlisten: (() => void) | undefined;
subscribe("fastify.initialization", onFastify);
try {
  stack = await startDevStack({ logger: process.env.DEVSTACK_LOG ? { level: process.env.DEVSTACK_LOG } : false });
  unsubscribe("fastify.initialization", onFastify);
  const control = apps.map(relayControl).find((c): c is RelayControl => c !== null);
  if (!control) throw new Error("no relay control found on the stack's runtime");
  const { queueUrl, chainPid } = stack;
  const started = stack; // for the closures below

  const executablePath = process.env.CHROMIUM_PATH ?? execFileSync("sh", ["-c", "command -v chromium || true"], { encoding: "utf8" }).trim();
  if (!executablePath) throw new Error("no chromium on PATH: apt-get install chromium, or set CHROMIUM_PATH");
  // --no-sandbox: CI runs as root, where chromium's sandbox refuses to start.
  browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox"] });

  // 1. Weight on an empty store.
  const emptyWeight = await pageWeight(browser, queueUrl);
  const emptyMessage = await firstMessageBytes(queueUrl);

  // Set-up (untimed): deposits and every proof before anything is measured.
  const setupStarted = performance.now();
  const pool = await poolFixture(stack);
  const queue = createQueueClient({ baseUrl: queueUrl, reviewed: reviewedFrom(pool.config) });
  const queueConfig = await queue.beforePrepare();
  const total = Math.max(N, SINGLE);
  console.error(`setting up: ${total} deposits and proofs (2 s or more a proof)…`);
  const { notes, prove } = await depositedNotes(pool, total, sendFee(queueConfig, pool.asset));
  const proveStarted = performance.now();
  const proofs: PreparedTransaction[] = [];
  for (const note of notes) proofs.push(await prove(note, stack.relayer.address));
  const proveMs = performance.now() - proveStarted;
  const deposited = await stack.snapshot();
  const setupMs = performance.now() - setupStarted;

  // Every committed (operation, state), stamped as the store tells its listeners. Installed for both
  // kinds of burst alike, so its own small cost is in the baseline too.
  const committed = new Map<string, number>();
  unlisten = control.onChange((id) => {
    const state = id === null ? undefined : control.operation(id)?.state;
    const key = `${id}|${state}`;
    if (state !== undefined && !committed.has(key)) committed.set(key, clock());
  });

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript({ content: RECORD_SHOWN_STATES });
  const page = await context.newPage();
  const consoleErrors: string[] = [];
  page.on("console", (message) => void (message.type() === "error" && consoleErrors.push(message.text())));
  page.on("pageerror", (error) => consoleErrors.push(error.message));
  const openPage = async () => {
    await page.goto(`${queueUrl}${DASHBOARD}`);
    await page.getByText("live", { exact: true }).waitFor();
    await page.locator("#health .ready").waitFor();
  };
  const shown = () => page.evaluate(() => (globalThis as unknown as { shownStates: Record<string, [number, number | null]> }).shownStates);
  /** Waits until the page shows each of `ids` confirmed (and its next frame has run). */
  const shownConfirmed = (ids: string[]) =>
    page.waitForFunction((ids) => ids.every((id) => typeof (globalThis as unknown as { shownStates: Record<string, [number, number | null]> }).shownStates[`${id}|confirmed`]?.[1] === "number"), ids, { timeout: 60_000 });

  type Sample = { state: string; dom: number; frame: number };
  const samples = { load: [] as Sample[], idle: [] as Sample[] };
  let coalesced = 0;
  /** Pairs each state `ids` reached in the store with the moment the page showed it. */
  const collect = async (ids: string[], into: Sample[]) => {
    const seen = await shown();
    const { offset } = await clockOffset(page);
    for (const [key, at] of committed) {
      const [id, state] = key.split("|") as [string, string];
      if (!ids.includes(id)) continue;
      const onPage = seen[key];
      if (!onPage) coalesced++; // a later state of it was pushed in the same turn: never shown as such
      else into.push({ state, dom: onPage[0] - offset - at, frame: (onPage[1] ?? Number.NaN) - offset - at });
    }
  };

  // 3. Bursts with no page open and with the page open, alternating which goes first; each measured
  // from the first submit to the last confirmed (page opening and closing outside the window).
  type Run = { ms: number; requests: number; cpu: { node: number; anvil: number | null; chromium: number } };
  const runs = { none: [] as Run[], page: [] as Run[] };
  const burst = async (withPage: boolean) => {
    await page.goto("about:blank");
    await started.revert(deposited);
    if (withPage) await openPage();
    await sleep(SETTLE_MS);
    const txs = proofs.slice(0, N);
    const requestsBefore = await requestsAnswered(queueUrl);
    const before = { node: nodeCpuMs(), anvil: cpuMs(chainPid), chromium: chromiumCpuMs() };
    const result = await queueBurst(queue, queueConfig, txs, POLL);
    const after = { node: nodeCpuMs(), anvil: cpuMs(chainPid), chromium: chromiumCpuMs() };
    const requests = (await requestsAnswered(queueUrl)) - requestsBefore;
    const cpu = { node: after.node - before.node, anvil: after.anvil === null || before.anvil === null ? null : after.anvil - before.anvil, chromium: after.chromium - before.chromium };
    (withPage ? runs.page : runs.none).push({ ms: result.ms, requests, cpu });
    if (withPage) {
      const ids = result.relayed.map((r) => r.op.id);
      await shownConfirmed(ids);
      await collect(ids, samples.load);
    }
  };
  for (let r = 0; r < ROUNDS; r++) {
    for (const withPage of r % 2 === 0 ? [false, true] : [true, false]) await burst(withPage);
  }

  // The first load again, with the last burst's operations in the store.
  const loadedWeight = await pageWeight(browser, queueUrl);
  const loadedMessage = await firstMessageBytes(queueUrl);

  // 2. On an idle queue, one operation at a time, the page open.
  await page.goto("about:blank");
  await stack.revert(deposited);
  await openPage();
  for (let i = 0; i < SINGLE; i++) {
    const accepted = await queue.submit("send", queueConfig, proofs[i] as PreparedTransaction);
    const op = await queue.waitFor("send", accepted.id, SINGLE_POLL);
    if (op.state !== "confirmed") throw new QueuePathError(`single operation ${op.id} ended ${op.state}`);
    await shownConfirmed([op.id]);
    await collect([op.id], samples.idle);
  }
  const offset = await clockOffset(page);
  await page.goto("about:blank");
  await context.close();


  // Report.
  const tps = (run: Run) => N / (run.ms / 1000);
  const rps = (run: Run) => run.requests / (run.ms / 1000);
  const cpuPerTx = (run: Run, of: "node" | "anvil" | "chromium") => (run.cpu[of] ?? 0) / N;
  const cpuShare = (run: Run) => (run.cpu.node / run.ms) * 100;
  const med = (mode: Run[], f: (run: Run) => number) => median(mode.map(f));
  const list = (mode: Run[], f: (run: Run) => number, digits = 1) => mode.map((run) => f(run).toFixed(digits)).join(", ");
  const ratio = (f: (run: Run) => number) => `${(med(runs.page, f) / med(runs.none, f)).toFixed(2)}x`;

  console.log(`one local stack (automine), Debian's chromium headless at 1280x800; setup ${(setupMs / 1000).toFixed(1)} s (${total} deposits, ${total} proofs in ${(proveMs / 1000).toFixed(1)} s)`);
  const weightLine = (label: string, w: Awaited<ReturnType<typeof pageWeight>>) =>
    `${label}: ${w.requests.length} requests, ${w.total} bytes transferred (${kb(w.total)}; bodies ${kb(w.body)}, uncompressed as served; ${kb(w.gzip)} if gzipped) — ${w.requests
      .map((r) => `${new URL(r.url).pathname.split("/").pop()} ${r.bytes}`)
      .join(", ")}`;
  console.log(weightLine("page weight, first load, empty store", emptyWeight));
  console.log(weightLine(`page weight, first load, ${N} confirmed sends stored`, loadedWeight));
  console.log(
    `push channel's first message: "${emptyMessage.name}", ${emptyMessage.bytes} bytes, on an empty store; "${loadedMessage.name}", ${loadedMessage.bytes} bytes (${kb(loadedMessage.bytes)}) with ${N} confirmed sends stored (${loadedMessage.ops} operations in it)`,
  );
  // Wherever the list comes from (the first message or a request the page makes), what each operation adds.
  const listed = loadedWeight.total - emptyWeight.total + loadedMessage.bytes - emptyMessage.bytes;
  console.log(`a first load's list: ${(listed / N).toFixed(0)} bytes an operation (${N} confirmed sends: +${listed} bytes over the empty store's load and first message)`);

  const latencyLine = (label: string, xs: Sample[]) => {
    if (xs.length === 0) return `${label}: no samples`;
    const dom = xs.map((x) => x.dom);
    const frame = xs.map((x) => x.frame).filter(Number.isFinite);
    const states = [...new Set(xs.map((x) => x.state))].map((s) => `${s} ${ms(median(xs.filter((x) => x.state === s).map((x) => x.dom)))}`).join(", ");
    return `${label}: ${xs.length} state changes, in the DOM median ${ms(median(dom))}, p95 ${ms(percentile(dom, 95))}, max ${ms(Math.max(...dom))}; at the next frame median ${ms(median(frame))}, p95 ${ms(percentile(frame, 95))} (medians by state: ${states})`;
  };
  console.log(`store commit -> page shows it (clock offset page - node ${offset.offset.toFixed(2)} ms ± ${offset.within.toFixed(2)}, corrected):`);
  console.log(`  ${latencyLine(`during the bursts of ${N}`, samples.load)}`);
  console.log(`  ${latencyLine("one operation at a time", samples.idle)}`);
  console.log(`  ${coalesced} committed states never shown as such (a later state of the same operation went out in the same push)`);

  console.log(`${ROUNDS} rounds of bursts of N = ${N} private sends (clients poll status every ${POLL.intervalMs} ms), no page against the page open, alternating:`);
  const modeLine = (label: string, mode: Run[]) =>
    `  ${label.padEnd(10)} requests answered median ${med(mode, rps).toFixed(0)} req/s (rounds: ${list(mode, rps, 0)}), relays ${med(mode, tps).toFixed(2)} tx/s (rounds: ${list(mode, tps)}); CPU per transaction: this process (runtime + clients) ${med(mode, (r) => cpuPerTx(r, "node")).toFixed(1)} ms (${med(mode, cpuShare).toFixed(0)}% of a core), anvil ${med(mode, (r) => cpuPerTx(r, "anvil")).toFixed(1)} ms, chromium${mode === runs.none ? " (on about:blank)" : ""} ${med(mode, (r) => cpuPerTx(r, "chromium")).toFixed(1)} ms`;
  console.log(modeLine("no page", runs.none));
  console.log(modeLine("page open", runs.page));
  console.log(`  ratio page open / no page (medians): request rate ${ratio(rps)}, relay rate ${ratio(tps)}, this process's CPU per transaction ${ratio((r) => cpuPerTx(r, "node"))}, anvil's ${ratio((r) => cpuPerTx(r, "anvil"))}`);
  if (consoleErrors.length > 0) console.log(`page console errors: ${consoleErrors.join(" | ")}`);
} catch (error) {
  console.error(error instanceof QueuePathError ? `queue path failed: ${error.message}` : error);
  process.exitCode = 1;
} finally {
  unsubscribe("fastify.initialization", onFastify);
  unlisten?.();
  await browser?.close();
  await closeProvers();
  await stack?.stop();
}
