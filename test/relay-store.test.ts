import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it, vi } from "vitest";
import type { ObservedHead } from "../src/chain/head.ts";
import { Operation, type OperationState } from "../src/schemas/operation.ts";
import { StatusAnswers } from "../src/relay/status-answer.ts";
import { sqlite } from "../src/store/loader.ts";
import { SqliteOperationStore } from "../src/store/store.ts";
import { StoreInUseError, StoreMismatchError } from "../src/store/errors.ts";
import { type OperationRecord, type OperationStore } from "../src/store/types.ts";
import { operationView } from "../src/relay/view.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

// The store on its own (a real SQLite file): atomic claims, durability across reopening, deployment binding.
function record(id: string, nullifiers: string[], key: string | null = null): OperationRecord {
  const at = new Date().toISOString();
  return {
    id, kind: "send", state: "accepted", idempotencyKey: key, requestHash: `hash-${id}`,
    request: { deployment: { chainId: 11155111, poolAddress: "0x0000000000000000000000000000000000000001", domain: `0x${"0".repeat(64)}` } } as never,
    nullifiers, reason: null, attempts: [], minedHash: null, block: null, history: [{ state: "accepted", at }], createdAt: at, updatedAt: at,
  };
}
const tempDir = withTempDirs();
const file = async () => path.join(await tempDir("store-"), "queue.sqlite");
const moveTo = (store: OperationStore, id: string, state: OperationState) => store.save({ ...(store.get(id) as OperationRecord), state });

describe("SqliteOperationStore", () => {
  it("claims nullifiers and idempotency keys atomically; a nullifier stays claimed through confirmation, and only a failure frees it", async () => {
    const store = new SqliteOperationStore(await file());
    expect(store.insert(record("a", ["1", "2"], "k"))).toEqual({ ok: true });
    expect(store.insert(record("b", ["2", "3"]))).toEqual({ ok: false, conflict: "nullifier", nullifier: "2", operationId: "a", state: "accepted" });
    const replay = store.insert(record("c", ["9"], "k"));
    expect(replay).toMatchObject({ ok: false, conflict: "idempotency", existing: { id: "a" } });
    expect(store.get("b")).toBeUndefined(); // nothing half-written
    expect(store.countLive()).toBe(1);
    // Mined and confirmed: it spent them, so a copy checked before that cannot be stored after it.
    moveTo(store, "a", "included");
    moveTo(store, "a", "confirmed");
    expect(store.insert(record("b", ["2", "3"]))).toEqual({ ok: false, conflict: "nullifier", nullifier: "2", operationId: "a", state: "confirmed" });
    expect(store.claim("1")).toEqual({ operationId: "a", state: "confirmed" });
    expect(store.liveHolder("1")).toBeUndefined(); // claimed, not in flight
    expect(store.countLive()).toBe(0);
    // A failed operation frees its nullifiers: a retry of them is a new operation.
    expect(store.insert(record("d", ["4"]))).toEqual({ ok: true });
    for (const failed of ["rejected", "expired", "reverted"] as const) {
      moveTo(store, "d", failed);
      expect(store.claim("4")).toBeUndefined();
    }
    expect(store.insert(record("e", ["4", "5"]))).toEqual({ ok: true });
    expect(store.liveHolder("4")).toBe("e");
    store.close();
  });

  it("keeps operations and signed attempts across a reopen", async () => {
    const where = await file();
    const store = new SqliteOperationStore(where);
    const op = record("a", ["1", "2"]);
    store.insert(op);
    op.state = "submitted";
    op.history.push({ state: "submitted", at: op.createdAt });
    store.save(op, { attempt: { hash: `0x${"11".repeat(32)}`, nonce: 7, raw: "0x02f8", maxFeePerGas: "2", maxPriorityFeePerGas: "1", createdAt: op.createdAt } });
    store.close();
    const reopened = new SqliteOperationStore(where);
    const back = reopened.get("a");
    expect(back).toMatchObject({ state: "submitted", attempts: [{ nonce: 7, raw: "0x02f8" }] });
    expect(back?.history.map((h) => h.state)).toEqual(["accepted", "submitted"]);
    expect(reopened.nonTerminal().map((o) => o.id)).toEqual(["a"]);
    expect(reopened.maxNonce()).toBe(7);
    reopened.close();
  });

  it("peek: a frozen record, the same object until a write; status answers are the view with the head's age of each answer", () => {
    const store = new SqliteOperationStore(":memory:");
    store.insert(record("a", ["1"]));
    const first = store.peek("a") as OperationRecord;
    expect(Object.isFrozen(first.history[0])).toBe(true);
    expect(store.peek("a")).toBe(first);
    const a = store.get("a") as OperationRecord;
    a.state = "processing";
    a.history.push({ state: "processing", at: a.createdAt });
    store.save(a);
    const second = store.peek("a") as OperationRecord;
    expect(second).not.toBe(first);
    expect(second.history.map((h) => h.state)).toEqual(["accepted", "processing"]);

    let head: ObservedHead | null = null;
    const answers = new StatusAnswers({ head: { current: () => head }, reservations: { current: () => null }, requiredConfirmations: 2 });
    const expectView = (now: number) => expect(JSON.parse(answers.answer(second, now).json)).toEqual(operationView(second, head, 2, undefined, now));
    expectView(1_000);
    head = { number: 10n, observedAt: 1_000 };
    expectView(1_000);
    expectView(1_250);
    head = { number: 11n, observedAt: 2_000 };
    expectView(2_100);
    expect(answers.answer(second, 2_100).terminal).toBe(false);
    store.close();
  });

  it("status answers: a new head rewrites the confirmations and the head only; the schema check runs once per record", () => {
    const store = new SqliteOperationStore(":memory:");
    store.insert(record("a", ["1"]));
    const a = store.get("a") as OperationRecord;
    Object.assign(a, { state: "confirmed", block: { number: 10, hash: `0x${"ab".repeat(32)}` }, minedHash: `0x${"cd".repeat(32)}`, reason: null });
    a.history.push({ state: "confirmed", at: a.createdAt, detail: 'a "quoted" detail: \\"confirmations\\":1,"observedHead":{}}' });
    store.save(a);
    const mined = store.peek("a") as OperationRecord;
    let head: ObservedHead | null = null;
    const answers = new StatusAnswers({ head: { current: () => head }, reservations: { current: () => null }, requiredConfirmations: 2 });
    const checks = vi.spyOn(Operation, "parse");
    const expectView = (now: number) => expect(JSON.parse(answers.answer(mined, now).json)).toEqual(operationView(mined, head, 2, undefined, now));
    expectView(500); // no head yet: 0 confirmations, observedHead null
    for (const [number, observedAt, now] of [[9n, 1_000, 1_000], [10n, 1_500, 1_700], [11n, 2_000, 2_050], [15n, 2_000, 2_500]] as const) {
      head = { number, observedAt };
      expectView(now);
    }
    expect(answers.answer(mined, 3_000).terminal).toBe(true);
    expect(checks).toHaveBeenCalledTimes(1);
    checks.mockRestore();
    store.close();
  });

  it("peek: a write drops the peeked record of the operation it writes only; a restore drops them all", () => {
    const store = new SqliteOperationStore(":memory:");
    store.insert(record("a", ["1"]));
    const a = store.peek("a");
    store.insert(record("b", ["2"]));
    moveTo(store, "b", "processing");
    store.insertQuote({ id: "q", quote: {}, expiresAt: 10, client: "c" }, { now: 0, maxLivePerClient: 5, deleteExpiredBefore: 0 });
    expect(store.peek("a")).toBe(a); // others' writes: still the record a poll was answered from
    const b = store.peek("b");
    const checkpoint = store.checkpoint();
    expect(store.peek("b")).toBe(b);
    moveTo(store, "a", "processing");
    const a2 = store.peek("a");
    expect(a2).not.toBe(a);
    expect(a2?.state).toBe("processing");
    expect(store.peek("b")).toBe(b);
    store.restore(checkpoint);
    expect(store.peek("a")?.state).toBe("accepted"); // read again: the restore changed it
    expect(store.peek("b")).not.toBe(b);
    store.close();
  });

  it("tells its change listeners every insert and save after the commit, null after a restore, and nothing once they are removed", async () => {
    const store = new SqliteOperationStore(await file());
    const seen: Array<[string | null, string | undefined]> = [];
    // A listener reads the store as committed: the state it is told of is already there.
    const off = store.onChange((id) => seen.push([id, id === null ? undefined : store.peek(id)?.state]));
    store.onChange(() => {
      throw new Error("a broken listener");
    });
    const checkpoint = store.checkpoint();
    expect(store.insert(record("a", ["1"]))).toEqual({ ok: true });
    expect(store.insert(record("b", ["1"]))).toMatchObject({ ok: false }); // refused: nothing changed
    moveTo(store, "a", "submitted");
    store.restore(checkpoint);
    expect(seen).toEqual([["a", "accepted"], ["a", "submitted"], [null, undefined]]);
    off();
    store.insert(record("c", ["2"]));
    expect(seen).toHaveLength(3);
    store.close();
  });

  it("says nothing of SQLite being experimental when it opens; other experimental warnings still show", async () => {
    // A process of its own: this one has loaded node:sqlite already, and Node warns once per process.
    const script = `
      const { SqliteOperationStore } = await import(${JSON.stringify(new URL("../src/store/store.ts", import.meta.url).href)});
      new SqliteOperationStore(":memory:").close();
      process.emitWarning("another feature is experimental", "ExperimentalWarning");`;
    const { stderr } = await promisify(execFile)(process.execPath, ["--experimental-strip-types", "--input-type=module", "-e", script]);
    expect(stderr).toContain("ExperimentalWarning: another feature is experimental");
    expect(stderr).not.toMatch(/SQLite/);
  });

  it("is used by one runtime at a time", async () => {
    const where = await file();
    const first = new SqliteOperationStore(where);
    expect(() => new SqliteOperationStore(where)).toThrow(StoreInUseError);
    first.close();
    new SqliteOperationStore(where).close(); // free again once the first is closed
  });

  it("belongs to one deployment", async () => {
    const where = await file();
    const store = new SqliteOperationStore(where);
    store.bindDeployment("11155111:0xPool:0xblock");
    store.bindDeployment("11155111:0xPool:0xblock");
    expect(() => store.bindDeployment("11155111:0xPool:0xother")).toThrow(StoreMismatchError);
    store.close();
  });

  it("binds several idempotency keys to one operation, finds an identical request's operation unless it failed, and names who spent a nullifier", async () => {
    const store = new SqliteOperationStore(await file());
    expect(store.insert(record("a", ["1", "2"], "k1"))).toEqual({ ok: true });
    expect(store.bindIdempotencyKey("k2", "a").id).toBe("a");
    expect(store.bindIdempotencyKey("k2", "a").id).toBe("a"); // again: the same
    expect(store.byIdempotencyKey("k2")?.id).toBe("a");
    expect(store.byIdempotencyKey("k1")?.id).toBe("a");
    // A key already bound stays bound to what it names.
    expect(store.insert(record("b", ["9"], "x"))).toEqual({ ok: true });
    expect(store.bindIdempotencyKey("x", "a").id).toBe("b");
    expect(store.insert(record("c", ["7"], "k2"))).toMatchObject({ ok: false, conflict: "idempotency", existing: { id: "a" } });

    expect(store.twin("hash-a")?.id).toBe("a");
    expect(store.twin("hash-nope")).toBeUndefined();
    expect(store.spender("1")).toBeUndefined(); // live, not mined
    moveTo(store, "a", "confirmed");
    expect(store.twin("hash-a")?.id).toBe("a"); // confirmed: still the operation of that request
    expect(store.spender("1")).toBe("a");
    expect(store.spender("2")).toBe("a");
    moveTo(store, "b", "expired");
    expect(store.twin("hash-b")).toBeUndefined(); // failed: not an answer to a new request
    expect(store.spender("9")).toBeUndefined();
    store.close();
  });

  it("opens a store of version 1: its keys and nullifiers are indexed at open, idempotently", async () => {
    const where = await file();
    const old = new (sqlite().DatabaseSync)(where);
    old.exec(VERSION_1_SCHEMA);
    const at = new Date().toISOString();
    const insert = old.prepare(
      "INSERT INTO operations (id, kind, state, idempotency_key, request_hash, request, nullifiers, history, created_at, updated_at) VALUES (?, 'send', ?, ?, ?, '{}', ?, '[]', ?, ?)",
    );
    insert.run("old-confirmed", "confirmed", "old-key", "hash-old", JSON.stringify(["5", "6"]), at, at);
    insert.run("old-live", "submitted", null, "hash-live", JSON.stringify(["7", "8"]), at, at);
    old.prepare("INSERT INTO live_nullifiers (nullifier, operation_id) VALUES ('7', 'old-live'), ('8', 'old-live')").run();
    old.close();

    for (let open = 0; open < 2; open++) {
      const store = new SqliteOperationStore(where);
      expect(store.byIdempotencyKey("old-key")?.id).toBe("old-confirmed");
      expect(store.spender("5")).toBe("old-confirmed");
      expect(store.twin("hash-old")?.id).toBe("old-confirmed");
      expect(store.liveHolder("7")).toBe("old-live");
      expect(store.insert(record(`new-${open}`, ["1"], "old-key"))).toMatchObject({ ok: false, conflict: "idempotency", existing: { id: "old-confirmed" } });
      store.close();
    }
  });

  it("opens a store of version 2, whose confirmed operations had freed their nullifiers: they are claimed again", async () => {
    const where = await file();
    const old = new (sqlite().DatabaseSync)(where);
    old.exec(`${VERSION_1_SCHEMA}${VERSION_2_TABLES} PRAGMA user_version = 2;`);
    const at = new Date().toISOString();
    const insert = old.prepare("INSERT INTO operations (id, kind, state, request_hash, request, nullifiers, history, created_at, updated_at) VALUES (?, 'send', ?, ?, '{}', ?, '[]', ?, ?)");
    const index = old.prepare("INSERT INTO operation_nullifiers (nullifier, operation_id) VALUES (?, ?)");
    for (const [id, state, nullifiers] of [["confirmed", "confirmed", ["5", "6"]], ["live", "submitted", ["7"]], ["failed", "rejected", ["8"]]] as const) {
      insert.run(id, state, `hash-${id}`, JSON.stringify(nullifiers), at, at);
      for (const n of nullifiers) index.run(n, id);
    }
    old.prepare("INSERT INTO live_nullifiers (nullifier, operation_id) VALUES ('7', 'live')").run(); // the confirmed one's were deleted
    old.close();

    for (let open = 0; open < 2; open++) {
      const store = new SqliteOperationStore(where);
      expect(store.insert(record(`copy-${open}`, ["6"]))).toEqual({ ok: false, conflict: "nullifier", nullifier: "6", operationId: "confirmed", state: "confirmed" });
      expect(store.insert(record(`live-${open}`, ["7"]))).toEqual({ ok: false, conflict: "nullifier", nullifier: "7", operationId: "live", state: "submitted" });
      expect(store.liveHolder("7")).toBe("live");
      expect(store.claim("8")).toBeUndefined();
      store.close();
    }
  });
});

describe("quotes in the store", () => {
  const action = (id: string, nullifiers: string[], quoteId: string): OperationRecord => {
    const op = record(id, nullifiers);
    return { ...op, kind: "withdraw", request: { ...op.request, action: { quoteId } } as never };
  };
  const limits = (now: number, maxLivePerClient = 100, keep = 60) => ({ now, maxLivePerClient, deleteExpiredBefore: now - keep });
  const quote = (id: string, expiresAt: number, client = "10.0.0.1") => ({ id, quote: { quoteId: id }, expiresAt, client });

  it("a quote is used once: consumed in its action's insert; a failure before any attempt releases it, a signed attempt keeps it", async () => {
    const store = new SqliteOperationStore(await file());
    expect(store.insertQuote(quote("qt_1", 2_000), limits(1_000))).toEqual({ ok: true });
    expect(store.insert(action("a", ["1"], "qt_1"))).toEqual({ ok: true });
    expect(store.quoteUser("qt_1")).toBe("a");
    // Another action (other nullifiers) citing it: refused, naming the one that used it; nothing written.
    expect(store.insert(action("b", ["2"], "qt_1"))).toEqual({ ok: false, conflict: "quote", quoteId: "qt_1", operationId: "a" });
    expect(store.get("b")).toBeUndefined();
    expect(store.claim("2")).toBeUndefined();
    // An action citing a quote the store does not hold (deleted, never made) is never stored.
    expect(store.insert(action("c", ["3"], "qt_unknown"))).toEqual({ ok: false, conflict: "quote", quoteId: "qt_unknown", operationId: null });
    // Rejected before anything was signed: the quote is free again.
    moveTo(store, "a", "rejected");
    expect(store.quoteUser("qt_1")).toBeUndefined();
    expect(store.insert(action("b", ["2"], "qt_1"))).toEqual({ ok: true });
    // Signed (and so maybe broadcast): a later failure keeps the quote used.
    const b = store.get("b") as OperationRecord;
    store.save({ ...b, state: "submitted" }, { attempt: { hash: `0x${"22".repeat(32)}`, nonce: 1, raw: "0x02", maxFeePerGas: "2", maxPriorityFeePerGas: "1", createdAt: b.createdAt } });
    moveTo(store, "b", "expired");
    expect(store.quoteUser("qt_1")).toBe("b");
    store.close();
  });

  it("deletes quotes expired longer than the grace period when one is stored, and caps each client's unexpired quotes", async () => {
    const store = new SqliteOperationStore(await file());
    for (let i = 0; i < 3; i++) expect(store.insertQuote(quote(`qt_a${i}`, 1_010 + i), limits(1_000, 3))).toEqual({ ok: true });
    // The client's fourth live quote is refused, with the soonest expiry; another client is not.
    expect(store.insertQuote(quote("qt_a3", 1_020), limits(1_000, 3))).toEqual({ ok: false, live: 3, nextExpiry: 1_010 });
    expect(store.insertQuote(quote("qt_b0", 1_020, "10.0.0.2"), limits(1_000, 3))).toEqual({ ok: true });
    expect(store.liveQuotes("10.0.0.1", 1_000)).toEqual({ count: 3, nextExpiry: 1_010 });
    // Expired quotes no longer count against the cap, but are kept through the grace period (60 s here)...
    expect(store.insertQuote(quote("qt_a3", 1_100), limits(1_011, 3))).toEqual({ ok: true });
    expect(store.getQuote("qt_a0")).toEqual({ quoteId: "qt_a0" });
    expect(store.countQuotes()).toBe(5);
    // ...and deleted after it.
    expect(store.insertQuote(quote("qt_b1", 1_200, "10.0.0.2"), limits(1_075, 3))).toEqual({ ok: true });
    expect(store.getQuote("qt_a0")).toBeUndefined();
    expect(store.countQuotes()).toBe(3); // qt_a3, qt_b0 (expired 1020, kept until 1080), qt_b1
    store.close();
  });

  it("opens a store of version 3: its quotes get a client and a user, and are usable once", async () => {
    const where = await file();
    const old = new (sqlite().DatabaseSync)(where);
    old.exec(`${VERSION_1_SCHEMA}${VERSION_2_TABLES} DROP TABLE live_nullifiers; PRAGMA user_version = 3;`);
    old.prepare("INSERT INTO quotes (id, quote, expires_at, created_at) VALUES ('qt_old', '{}', 5000, '2026-01-01T00:00:00.000Z')").run();
    old.close();
    for (let open = 0; open < 2; open++) {
      const store = new SqliteOperationStore(where);
      expect(store.liveQuotes("", 1_000)).toEqual({ count: 1, nextExpiry: 5_000 });
      if (open === 0) expect(store.insert(action("a", ["1"], "qt_old"))).toEqual({ ok: true });
      expect(store.quoteUser("qt_old")).toBe("a");
      store.close();
    }
  });
});

/** The store's schema before idempotency keys and nullifiers got their own tables. */
const VERSION_1_SCHEMA = `
CREATE TABLE IF NOT EXISTS operations (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, state TEXT NOT NULL, idempotency_key TEXT UNIQUE, request_hash TEXT NOT NULL,
  request TEXT NOT NULL, nullifiers TEXT NOT NULL, reason TEXT, mined_hash TEXT, block TEXT, history TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS operations_state ON operations(state);
CREATE TABLE IF NOT EXISTS live_nullifiers (nullifier TEXT PRIMARY KEY, operation_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS attempts (
  hash TEXT PRIMARY KEY, operation_id TEXT NOT NULL, nonce INTEGER NOT NULL, raw TEXT NOT NULL,
  max_fee_per_gas TEXT NOT NULL, max_priority_fee_per_gas TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_operation ON attempts(operation_id);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

/** What version 2 added: a table of keys, and every operation's nullifiers indexed. */
const VERSION_2_TABLES = `
CREATE TABLE IF NOT EXISTS idempotency_keys (key TEXT PRIMARY KEY, operation_id TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS operation_nullifiers (nullifier TEXT NOT NULL, operation_id TEXT NOT NULL, PRIMARY KEY (nullifier, operation_id));
CREATE INDEX IF NOT EXISTS operations_request_hash ON operations(request_hash);
CREATE TABLE IF NOT EXISTS quotes (id TEXT PRIMARY KEY, quote TEXT NOT NULL, expires_at INTEGER NOT NULL, created_at TEXT NOT NULL);
`;

describe("a page of operations", () => {
  it("newestFirst: newest first, filtered by kind, action, state, age and reservation in SQL, paged by a (created_at, id) cursor that ties do not break", async () => {
    const store = new SqliteOperationStore(await file());
    const base = Date.parse("2026-11-25T00:00:00.000Z");
    const made: OperationRecord[] = [];
    for (let i = 0; i < 30; i++) {
      const at = new Date(base + Math.floor(i / 3) * 1000).toISOString(); // three per second: ties on created_at
      const op = record(`op_${String(i).padStart(2, "0")}`, [`n${i}`]);
      const kind = (["send", "withdraw", "finalize"] as const)[i % 3] as OperationRecord["kind"];
      const request = { ...op.request, ...(i % 6 === 1 ? { action: { route: "swap" } } : {}), ...(kind === "finalize" ? { reservationId: i % 2 ? `0x${"AB".repeat(32)}` : `0x${"cd".repeat(32)}` } : {}) };
      made.push({ ...op, kind, request: request as never, state: i % 4 === 0 ? "confirmed" : "accepted", createdAt: at, updatedAt: at, history: [{ state: "accepted", at }] });
      store.insert(made.at(-1) as OperationRecord);
    }
    const newest = [...made].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1));
    const ids = (ops: OperationRecord[]) => ops.map((op) => op.id);

    // Paged 7 at a time from the last one's cursor: every operation once, in order.
    const seen: OperationRecord[] = [];
    for (let page = store.newestFirst({ limit: 7 }); page.length; ) {
      seen.push(...page);
      const last = page.at(-1) as OperationRecord;
      page = store.newestFirst({ limit: 7, before: { createdAt: last.createdAt, id: last.id } });
    }
    expect(ids(seen)).toEqual(ids(newest));
    expect(seen[0]).toEqual(store.get(newest[0]?.id as string)); // whole records, as get gives them

    const where = (keep: (op: OperationRecord) => boolean) => ids(newest.filter(keep));
    const isAction = (op: OperationRecord) => "action" in op.request;
    expect(ids(store.newestFirst({ limit: 100, kind: "withdraw", action: true }))).toEqual(where((op) => op.kind === "withdraw" && isAction(op)));
    expect(ids(store.newestFirst({ limit: 100, kind: "withdraw", action: false }))).toEqual(where((op) => op.kind === "withdraw" && !isAction(op)));
    expect(ids(store.newestFirst({ limit: 100, kind: "send", state: "confirmed" }))).toEqual(where((op) => op.kind === "send" && op.state === "confirmed"));
    expect(ids(store.newestFirst({ limit: 100, since: new Date(base + 8000).toISOString() }))).toEqual(where((op) => op.createdAt >= new Date(base + 8000).toISOString()));
    expect(ids(store.newestFirst({ limit: 100, kind: "finalize", reservationId: `0x${"ab".repeat(32)}` }))).toEqual(where((op) => op.kind === "finalize" && "reservationId" in op.request && String(op.request.reservationId).startsWith("0xAB")));
    expect(ids(store.newestFirst({ limit: 2, state: "confirmed" }))).toEqual(where((op) => op.state === "confirmed").slice(0, 2));
    store.close();
  });
});
