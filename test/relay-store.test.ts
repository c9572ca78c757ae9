import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SqliteOperationStore, StoreInUseError, StoreMismatchError, type OperationRecord } from "../src/relay/store.ts";

// The store on its own (a real SQLite file): atomic claims, durability across reopening, deployment binding.
function record(id: string, nullifiers: string[], key: string | null = null): OperationRecord {
  const at = new Date().toISOString();
  return {
    id, kind: "send", state: "accepted", idempotencyKey: key, requestHash: `hash-${id}`,
    request: { deployment: { chainId: 11155111, poolAddress: "0x0000000000000000000000000000000000000001", domain: `0x${"0".repeat(64)}` } } as never,
    nullifiers, reason: null, attempts: [], minedHash: null, block: null, history: [{ state: "accepted", at }], createdAt: at, updatedAt: at,
  };
}
const file = async () => path.join(await mkdtemp(path.join(tmpdir(), "store-")), "queue.sqlite");

describe("SqliteOperationStore", () => {
  it("claims nullifiers and idempotency keys atomically, and frees nullifiers at the end", async () => {
    const store = new SqliteOperationStore(await file());
    expect(store.insert(record("a", ["1", "2"], "k"))).toEqual({ ok: true });
    expect(store.insert(record("b", ["2", "3"]))).toEqual({ ok: false, conflict: "nullifier", nullifier: "2", operationId: "a" });
    const replay = store.insert(record("c", ["9"], "k"));
    expect(replay).toMatchObject({ ok: false, conflict: "idempotency", existing: { id: "a" } });
    expect(store.get("b")).toBeUndefined(); // nothing half-written
    expect(store.countLive()).toBe(1);
    const a = store.get("a") as OperationRecord;
    a.state = "confirmed";
    store.save(a, { releaseNullifiers: true });
    expect(store.insert(record("b", ["2", "3"]))).toEqual({ ok: true });
    expect(store.countLive()).toBe(1);
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
});
