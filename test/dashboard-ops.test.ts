import { describe, expect, it } from "vitest";
import type { RelayControl } from "../src/relay/control.ts";
import type { OperationRecord } from "../src/relay/store.ts";
import { opsPageHtml, DASHBOARD_PAGE_SIZE as PAGE_SIZE } from "../harness/dev/index.ts";

// The dashboard's list, a page at a time, over a store's worth of operations (no chain needed: the
// list reads only the store's records, here made in memory as the store would return them).
const START = Date.parse("2026-11-25T00:00:00.000Z");
function record(i: number, overrides: Partial<OperationRecord> = {}): OperationRecord {
  const at = new Date(START + i * 1000).toISOString();
  return {
    id: `op_${String(i).padStart(32, "0")}`,
    kind: i % 3 === 0 ? "finalize" : "send",
    state: i % 2 === 0 ? "confirmed" : "accepted",
    request: i % 3 === 0 ? { reservationId: `0x${"ab".repeat(32)}` } : {},
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
/** The one part of the relay control the list reads: the store's operations since a time, oldest first. */
const controlOf = (ops: OperationRecord[]) => ({ operationsSince: (at: string) => ops.filter((op) => op.createdAt >= at) }) as unknown as RelayControl;
const ids = (html: string) => [...html.matchAll(/<details id="op-([^"]+)"/g)].map((m) => m[1]);
const olderLink = (html: string) => /hx-get="\/api\/dev\/dashboard\/ops\?([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&");

describe("dashboard operations list", () => {
  const ops = Array.from({ length: 1000 }, (_, i) => record(i));
  const control = controlOf(ops);

  it("shows 1,000 operations a page at a time, newest first, each page ending with a button for the older ones", () => {
    const first = opsPageHtml(control, {}, "/api/dev", START + 2000_000);
    expect(ids(first)).toHaveLength(PAGE_SIZE);
    expect(ids(first)[0]).toBe(ops[999]?.id);
    expect(first).toContain(`older operations (${1000 - PAGE_SIZE} more)`);
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

  it("filters by kind, state and age on the server, the older button keeping the filters", () => {
    const finalizes = opsPageHtml(control, { kind: "finalize", state: "confirmed" }, "/api/dev", START + 2000_000);
    const expected = ops.filter((op) => op.kind === "finalize" && op.state === "confirmed").reverse();
    expect(ids(finalizes)).toEqual(expected.slice(0, PAGE_SIZE).map((op) => op.id));
    expect(new URLSearchParams(olderLink(finalizes)).get("kind")).toBe("finalize");
    // Accepted in the last 10 s (of the clock given): the newest ten.
    expect(ids(opsPageHtml(control, { since: 10 }, "/api/dev", START + 1000_000))).toEqual(ops.slice(990).map((op) => op.id).reverse());
    expect(opsPageHtml(control, { kind: "action" }, "/api/dev")).toContain("no operation matches the filters");
    expect(opsPageHtml(controlOf([]), {}, "/api/dev")).toContain("no operation yet");
  });

  it("escapes what an operation carries (a failure's detail, a history entry) in the HTML", () => {
    const hostile = '<img src=x onerror="alert(1)">';
    const html = opsPageHtml(controlOf([record(1, { reason: { code: "reverted", detail: hostile } as OperationRecord["reason"], history: [{ state: "accepted", at: new Date(START).toISOString(), detail: hostile }] })]), {}, "/api/dev");
    expect(html).not.toContain("<img");
    expect(html).toContain("&#60;img src=x onerror=&#34;alert(1)&#34;&#62;");
  });
});
