import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { RelayControl } from "../src/relay/control.ts";
import { OPERATION_STATES } from "../src/schemas/operation-states.ts";
import { SqliteOperationStore } from "../src/store/store.ts";
import type { OperationRecord } from "../src/store/types.ts";
import { dashboardAssets, dashboardControlsHtml, dashboardCountsHtml, dashboardPageHtml as pageHtml, opsPageHtml, operationHtml, DASHBOARD_PAGE_SIZE as PAGE_SIZE, dashboardPushEvent } from "../harness/dashboard/index.ts";

// The dashboard's list, a page at a time, over a store's worth of operations: a real store (in memory),
// read through the two parts of the relay control the list uses. No chain needed.
const START = Date.parse("2026-11-25T00:00:00.000Z");
function record(i: number, overrides: Partial<OperationRecord> = {}): OperationRecord {
  const at = new Date(START + i * 1000).toISOString();
  const kind = i % 3 === 0 ? "finalize" : i % 3 === 1 ? "send" : "withdraw";
  return {
    id: `op_${String(i).padStart(32, "0")}`,
    kind,
    state: i % 2 === 0 ? "confirmed" : "accepted",
    idempotencyKey: null,
    requestHash: `hash-${i}`,
    // Every fourth withdrawal is an action (a withdrawal with an action's terms).
    request: kind === "finalize" ? { reservationId: `0x${"ab".repeat(32)}` } : kind === "withdraw" && i % 4 === 0 ? { action: { route: "swap" } } : {},
    nullifiers: [`n${i}`],
    history: [{ state: "accepted", at }],
    attempts: [],
    reason: null,
    minedHash: null,
    block: null,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  } as unknown as OperationRecord;
}
function controlOf(ops: OperationRecord[], requiredConfirmations = 1): RelayControl {
  const store = new SqliteOperationStore(":memory:");
  // Inserted as accepted, then saved as they are (a mined one's block and its attempts are written by a save).
  for (const op of ops) {
    store.insert(op);
    store.save(op);
    for (const attempt of op.attempts) store.save(op, { attempt: { ...attempt, raw: "0x00" } });
  }
  return { newestFirst: (page) => store.newestFirst(page), requiredConfirmations: () => requiredConfirmations, stateCounts: () => store.stateCounts() } as Partial<RelayControl> as RelayControl;
}
const ids = (html: string) => [...html.matchAll(/<details id="op-([^"]+)"/g)].map((m) => m[1]);
const olderLink = (html: string) => /hx-get="\/api\/dev\/dashboard\/ops\?([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&");

describe("dashboard operations list", () => {
  const ops = Array.from({ length: 1000 }, (_, i) => record(i));
  const control = controlOf(ops);

  it("shows 1,000 operations a page at a time, newest first, each page ending with a button for the older ones", () => {
    const first = opsPageHtml(control, {}, "/api/dev", START + 2000_000);
    expect(ids(first)).toHaveLength(PAGE_SIZE);
    expect(ids(first)[0]).toBe(ops[999]?.id);
    expect(first).toContain("older operations");
    // Following the buttons visits every operation once, in order, and the last page has none.
    const seen = [...ids(first)];
    let query = olderLink(first);
    while (query) {
      const params = Object.fromEntries(new URLSearchParams(query));
      const page = opsPageHtml(control, params, "/api/dev", START + 2000_000);
      seen.push(...ids(page));
      query = olderLink(page);
    }
    expect(seen).toEqual(ops.map((op) => op.id).reverse());
  });

  it("filters by kind (an action apart from a withdrawal), state and age in the store, the older button keeping the filters", () => {
    const finalizes = opsPageHtml(control, { kind: "finalize", state: "confirmed" }, "/api/dev", START + 2000_000);
    const expected = ops.filter((op) => op.kind === "finalize" && op.state === "confirmed").reverse();
    expect(ids(finalizes)).toEqual(expected.slice(0, PAGE_SIZE).map((op) => op.id));
    expect(new URLSearchParams(olderLink(finalizes)).get("kind")).toBe("finalize");
    const isAction = (op: OperationRecord) => "action" in op.request;
    expect(ids(opsPageHtml(control, { kind: "action" }, "/api/dev"))).toEqual(ops.filter(isAction).reverse().slice(0, PAGE_SIZE).map((op) => op.id));
    expect(ids(opsPageHtml(control, { kind: "withdraw" }, "/api/dev"))).toEqual(ops.filter((op) => op.kind === "withdraw" && !isAction(op)).reverse().slice(0, PAGE_SIZE).map((op) => op.id));
    // Accepted in the last 10 s (of the clock given): the newest ten.
    expect(ids(opsPageHtml(control, { since: 10 }, "/api/dev", START + 1000_000))).toEqual(ops.slice(990).map((op) => op.id).reverse());
    expect(opsPageHtml(control, { kind: "send", state: "rejected" }, "/api/dev")).toContain("no operation matches the filters");
    expect(opsPageHtml(controlOf([]), {}, "/api/dev")).toContain("no operation yet");
  });

  it("a mined operation's confirmations are counted out of the relayer's required ones", () => {
    const mined = record(1, { state: "included", block: { number: 7, hash: `0x${"12".repeat(32)}` }, minedHash: `0x${"34".repeat(32)}` });
    expect(opsPageHtml(controlOf([mined], 3), {}, "/api/dev")).toContain('class="confirmations" data-block="7" data-required="3"');
  });

  it("shortens a hash in a history entry's detail as everywhere else, the whole of it on hover and behind a copy button", () => {
    const tx = `0x${"8d0b4118".repeat(8)}`;
    const html = opsPageHtml(controlOf([record(1, { history: [{ state: "submitted", at: new Date(START).toISOString(), detail: `nonce 2, ${tx} <b>` }] })]), {}, "/api/dev");
    expect(html).toContain(`<span class="detail">nonce 2, <code title="${tx}">0x8d0b4118…0b4118</code><button type="button" class="copy" data-copy="${tx}"`);
    expect(html.replaceAll(`"${tx}"`, "").replaceAll(`copy ${tx}`, "")).not.toContain(tx); // as text, only shortened
    expect(html).toContain("&#60;b&#62;");
  });

  it("escapes what an operation carries (a failure's detail, a history entry) in the HTML", () => {
    const hostile = '<img src=x onerror="alert(1)">';
    const html = opsPageHtml(controlOf([record(1, { reason: { code: "reverted", detail: hostile } as OperationRecord["reason"], history: [{ state: "accepted", at: new Date(START).toISOString(), detail: hostile }] })]), {}, "/api/dev");
    expect(html).not.toContain("<img");
    expect(html).toContain("&#60;img src=x onerror=&#34;alert(1)&#34;&#62;");
  });

  it("colours every operation state as the README's legend says: the failures one red, the others each their own", () => {
    const css = String(dashboardAssets().get("dashboard.css")?.body);
    const colour = (state: string) => new RegExp(`\\.state\\[data-state="${state}"\\][^{]*\\{ background: (#[0-9a-f]{6}); \\}`).exec(css)?.[1];
    const colours = Object.fromEntries(OPERATION_STATES.map((state) => [state, colour(state)]));
    expect(colours).toEqual({ accepted: "#57606a", processing: "#6f42c1", submitted: "#0969da", included: "#1b7c83", confirmed: "#1a7f37", rejected: "#cf222e", reverted: "#cf222e", expired: "#cf222e" });
    // The page shows them once, in the diagram's order: as the counts' line (their legend) until the first counts come.
    const legend = /<p id="ops-counts"[^>]*>(.*?)<\/p>/.exec(pageHtml("/api/dev"))?.[1] ?? "";
    expect([...legend.matchAll(/data-state="([a-z]+)"/g)].map((m) => m[1])).toEqual([...OPERATION_STATES]);
    expect([...pageHtml("/api/dev").matchAll(/class="state"/g)]).toHaveLength(OPERATION_STATES.length);
  });
});

describe("the dashboard's push channel", () => {
  it("drops a page that stopped reading once its unsent events pass the cap, and keeps writing to the others", () => {
    const received: string[] = [];
    const reading = { res: new Writable({ write: (chunk, _encoding, done) => (received.push(String(chunk)), done()) }) };
    // A socket whose peer reads nothing: every write after the first stays unsent.
    const stalled = { res: new Writable({ highWaterMark: 1, write: () => {} }) };
    const pages = new Set([reading, stalled]);
    const dropped: unknown[] = [];
    const drop = (page: typeof reading) => (dropped.push(page), pages.delete(page));
    const data = "x".repeat(1000);
    for (let i = 0; i < 20; i++) dashboardPushEvent(pages, "op", data, drop, 8_000);
    expect(dropped).toEqual([stalled]);
    expect(stalled.res.writableLength).toBeLessThan(8_000 + 2_000); // never more than the cap and one event
    expect(received).toHaveLength(20);
    expect(received[0]).toBe(`event: op\ndata: ${data}\n\n`);
  });
});

/** Text as a reader sees it: tags gone, entities read. */
const textOf = (html: string) => html.replace(/<[^>]+>/g, "").replaceAll("&#40;", "(").replaceAll("&#41;", ")").replaceAll("&#39;", "'").replaceAll("&#34;", '"');
const USDC = "0x5fbdb2315678afecb367f032d93f642f64180aa3";
const ASSETS = new Map([[USDC, { symbol: "dUSDC", decimals: 6 }]]);
/** A withdrawal's stored request, as a client sends it (public fields only). */
function withdrawal(overrides: { action?: unknown } = {}) {
  return {
    deployment: { chainId: 11155111, poolAddress: `0x${"11".repeat(20)}`, domain: `0x${"22".repeat(32)}` },
    proof: { a: ["1", "2"], b: [["3", "4"], ["5", "6"]], c: ["7", "8"] },
    publicInputs: { root: "9", publicAmount: "10", extDataHash: "11", asset: USDC, domain: "12", inputNullifiers: ["101", "102"], outputCommitments: ["13", "14"] },
    extData: { recipient: `0x${"ab".repeat(20)}`, extAmount: "-25000000", relayer: `0x${"cd".repeat(20)}`, fee: "150000", encryptedOutput1: "0x", encryptedOutput2: "0x" },
    ...overrides,
  };
}

describe("an operation's entry (issue 30, items 12 and 13)", () => {
  it("shows what the operation asked for: kind, asset, amount, fee, recipient, nullifiers and idempotency key", () => {
    const op = record(2, { kind: "withdraw", request: withdrawal(), nullifiers: ["101", "102"], idempotencyKey: "checkout-42" } as Partial<OperationRecord>);
    const payload = /<dl class="payload">(.*?)<\/dl>/.exec(operationHtml(op, "/api/dev", 1, ASSETS))?.[1] ?? "";
    const rows = Object.fromEntries([...payload.matchAll(/<dt>([^<]+)<\/dt><dd>(.*?)<\/dd>/g)].map((m) => [m[1], m[2] as string]));
    expect(Object.keys(rows)).toEqual(["kind", "asset", "amount", "fee", "recipient", "nullifiers", "idempotency key"]);
    expect(textOf(rows.kind as string)).toBe("withdraw");
    expect(rows.asset).toContain(`dUSDC <code title="${USDC}">`);
    expect(textOf(rows.amount as string)).toBe("25 dUSDC");
    expect(textOf(rows.fee as string)).toBe("0.15 dUSDC");
    expect(rows.recipient).toContain(`data-copy="0x${"ab".repeat(20)}"`);
    expect(rows.nullifiers).toContain('data-copy="101"');
    expect(rows.nullifiers).toContain('data-copy="102"');
    expect(textOf(rows["idempotency key"] as string)).toBe("checkout-42");
    // An action adds its terms; a send's amount is private; a finalize names its reservation; an unknown asset is in base units.
    const action = operationHtml(record(4, { kind: "withdraw", request: withdrawal({ action: { quoteId: `qt_${"0".repeat(64)}`, routeId: `0x${"33".repeat(32)}`, outputAsset: USDC, minOutput: "24000000", outputPrecommitment: "5", deadline: "1800000000", finalizeFee: "1", finalizer: `0x${"cd".repeat(20)}` } }) } as Partial<OperationRecord>), "/api/dev", 1, ASSETS);
    expect(textOf(action)).toContain("outputat least 24 dUSDC");
    expect(action).toContain('<dt>route</dt>');
    const send = operationHtml(record(1, { kind: "send", request: { ...withdrawal(), extData: { ...withdrawal().extData, extAmount: "0" } } } as Partial<OperationRecord>), "/api/dev", 1, ASSETS);
    expect(textOf(send)).toContain("amountprivate");
    expect(operationHtml(record(3), "/api/dev", 1)).toContain(`<dt>reservation</dt><dd><code title="0x${"ab".repeat(32)}">`);
    expect(textOf(operationHtml(op, "/api/dev", 1))).toContain("25000000 (base units)");
  });

  it("says a revert once: not the decoded error again when the reason's detail names it", () => {
    const failed = (detail: string) =>
      textOf(operationHtml(record(1, { state: "reverted", reason: { code: "reverted", detail, revert: { name: "InvalidProof", args: [] } } } as Partial<OperationRecord>), "/api/dev", 1));
    expect(failed("the Pool reverted with InvalidProof()").match(/InvalidProof\(\)/g)).toHaveLength(1);
    // A detail that does not name it gets it added.
    expect(failed("mined with status 0")).toContain("mined with status 0 InvalidProof()");
  });

  it("says a failure once: its code not twice in the summary, its reason not again on the step that ended it", () => {
    const detail = "the Pool reverted with InvalidProof()";
    const at = new Date(START).toISOString();
    const reverted = record(1, {
      state: "reverted",
      reason: { code: "reverted", detail, revert: { name: "InvalidProof", args: [] } },
      history: [{ state: "accepted", at }, { state: "included", at, detail: "in block 8 (status 0)" }, { state: "reverted", at, detail }],
    } as Partial<OperationRecord>);
    const html = operationHtml(reverted, "/api/dev", 1);
    const summary = textOf(/<summary>(.*?)<\/summary>/.exec(html)?.[1] ?? "");
    expect(summary.match(/reverted/g)).toHaveLength(1);
    expect(textOf(html).match(/InvalidProof\(\)/g)).toHaveLength(1);
    expect(textOf(html)).toContain("in block 8 (status 0)"); // another step's detail stays
    // A code that is not the state is named: a rejected one's, say.
    const rejected = operationHtml(record(1, { state: "rejected", reason: { code: "simulation_failed", detail: "FeeTooHigh(1, 0)" } } as Partial<OperationRecord>), "/api/dev", 1);
    expect(textOf(/<summary>(.*?)<\/summary>/.exec(rejected)?.[1] ?? "")).toContain("simulation_failed");
  });

  it("says a send's recipient is private (the Pool pays no address for a send), not 0x0", () => {
    const send = (recipient: string) => {
      const request = { ...withdrawal(), extData: { ...withdrawal().extData, extAmount: "0", recipient } };
      const payload = /<dl class="payload">(.*?)<\/dl>/.exec(operationHtml(record(1, { kind: "send", request } as Partial<OperationRecord>), "/api/dev", 1, ASSETS))?.[1] ?? "";
      return /<dt>recipient<\/dt><dd>(.*?)<\/dd>/.exec(payload)?.[1] ?? "";
    };
    expect(textOf(send(`0x${"0".repeat(40)}`))).toBe("private (a send pays no address: its recipient owns its output notes)");
    // One that names an address anyway: shown, paid nothing.
    expect(textOf(send(`0x${"ab".repeat(20)}`))).toContain("paid nothing (a send pays no address");
  });

  it("counts the operations in each state, of every kind", () => {
    const ops = Array.from({ length: 30 }, (_, i) => record(i, i % 5 === 0 ? { state: "reverted" } : {}));
    const html = dashboardCountsHtml(controlOf(ops));
    const counts = Object.fromEntries([...html.matchAll(/<span class="count" data-state="([a-z]+)">.*?<span class="n">(\d+)<\/span>/g)].map((m) => [m[1], Number(m[2])]));
    const expected = Object.fromEntries(OPERATION_STATES.map((state) => [state, ops.filter((op) => op.state === state).length]));
    expect(counts).toEqual(expected);
    expect(expected.reverted).toBe(6);
    expect(html).toMatch(/^30 operations: /);
    // A state the store holds that this page does not list (a newer runtime's) is counted too, after the others.
    const other = dashboardCountsHtml(controlOf([record(1, { state: "queued" as OperationRecord["state"] })]));
    expect(other).toMatch(/data-state="expired">.*data-state="queued">.*<span class="n">1<\/span>/);
  });

  it("finds an operation by its id or by the hash of any of its signed attempts, with the other filters", () => {
    const attempt = (n: number) => ({ hash: `0x${n.toString(16).padStart(64, "0")}`, nonce: n, maxFeePerGas: "1", maxPriorityFeePerGas: "1", createdAt: new Date(START).toISOString() });
    const ops = Array.from({ length: 20 }, (_, i) => record(i, { attempts: [attempt(1000 + i), attempt(2000 + i)] } as Partial<OperationRecord>));
    const control = controlOf(ops);
    expect(ids(opsPageHtml(control, { q: ops[7]?.id }, "/api/dev"))).toEqual([ops[7]?.id]);
    expect(ids(opsPageHtml(control, { q: ` ${attempt(2011).hash.toUpperCase().replace("0X", "0x")} ` }, "/api/dev"))).toEqual([ops[11]?.id]);
    expect(ids(opsPageHtml(control, { q: attempt(1003).hash }, "/api/dev"))).toEqual([ops[3]?.id]);
    expect(opsPageHtml(control, { q: attempt(1003).hash, state: "confirmed" }, "/api/dev")).toContain("no operation matches the filters"); // op 3 is accepted
    expect(opsPageHtml(control, { q: `0x${"9".repeat(64)}` }, "/api/dev")).toContain("no operation matches the filters");
    expect(opsPageHtml(control, { q: "hello" }, "/api/dev")).toContain("search by an operation id (op_…) or a transaction hash");
    // The page's search box sends q with the other filters.
    expect(pageHtml("/api/dev")).toMatch(/<form id="filters"[^>]*>[\s\S]*<input type="search" name="q"/);
  });
});

describe("the dashboard's controls (issue 30, item 12)", () => {
  it("leave the relayer's balance empty until a value is typed, and ask before resetting the stack", () => {
    const html = dashboardControlsHtml("/api/dev");
    const balance = /<input name="balanceWei"[^>]*>/.exec(html)?.[0] ?? "";
    expect(balance).toContain(" required");
    expect(balance).not.toMatch(/ value=/);
    expect(/<button[^>]*data-post="\/api\/dev\/reset"[^>]*>/.exec(html)?.[0]).toMatch(/ data-confirm="Reset the stack/);
  });

  it("has a banner for held mining, saying the app's own wallet transactions wait too", () => {
    expect(pageHtml("/api/dev")).toMatch(/<p id="mining-held" class="banner" hidden>.*your app's own wallet transactions/);
  });
});
