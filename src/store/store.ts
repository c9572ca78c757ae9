import type { DatabaseSync, StatementSync } from "node:sqlite";
import { TERMINAL_STATES, type OperationState } from "../schemas/operation.ts";
import { Checkpoints } from "./checkpoints.ts";
import { StoreInUseError, StoreMismatchError, unwritable } from "./errors.ts";
import { openDatabase } from "./loader.ts";
import { FAILED, FAILED_STATES, LIVE_STATES, migrate, pageQuery, recordOf, REFUSED, SCHEMA, type Row } from "./schema.ts";
import type { Claim, InsertResult, OperationPage, OperationRecord, OperationStore, QuoteInsertResult, QuoteLimits, StoreCheckpoint, StoredAttempt, StoredQuote } from "./types.ts";
import { WalSync } from "./wal-sync.ts";

/** Operations kept by peek: more than the clients polling at once. */
const PEEK_CACHE_SIZE = 1_024;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** The store on SQLite (node:sqlite): a file in the stack's state dir, or ":memory:". */
export class SqliteOperationStore implements OperationStore {
  private readonly db: DatabaseSync;
  private readonly checkpoints: Checkpoints;
  /** Compiled once: compiling a statement costs more than running one. */
  private readonly statements = new Map<string, StatementSync>();
  /**
   * peek's records. A write transaction drops the one operation it writes, or all of them when it may
   * change any (a restore); this connection is the store's only writer.
   */
  private readonly peeked = new Map<string, Readonly<OperationRecord>>();
  private lastWriteError: string | null = null;
  private readonly listeners = new Set<(operationId: string | null) => void>();
  /** The WAL file, synced by flush() on libuv's thread pool; null for ":memory:". */
  private readonly wal: WalSync | null = null;

  constructor(file: string) {
    this.db = openDatabase(file);
    // WAL: a commit survives the process being killed at any instant, and a power loss once flush()
    // has synced it (NORMAL: SQLite itself syncs only at checkpoints). EXCLUSIVE locking, taken by a
    // first write: one runtime per store, so one writer per relayer key (a second one is refused).
    try {
      this.db.exec("PRAGMA busy_timeout = 2000; PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
      this.db.exec(SCHEMA);
      // Also takes the exclusive lock. Idempotent: a file already at this version is left as it is.
      this.transaction(() => migrate(this.db));
    } catch (error) {
      this.db.close();
      if (/locked|busy/i.test((error as Error).message)) throw new StoreInUseError(`the operation store ${file} is in use by another runtime`);
      throw unwritable(error, file) ?? error;
    }
    this.checkpoints = new Checkpoints(this.db);
    if (file !== ":memory:") this.wal = new WalSync(`${file}-wal`, (message) => void (this.lastWriteError = message));
  }

  flush(): Promise<void> {
    return this.wal === null ? Promise.resolve() : this.wal.flush();
  }

  insert(record: OperationRecord): InsertResult {
    const result = this.transaction((): InsertResult => {
      if (record.idempotencyKey !== null) {
        const existing = this.byIdempotencyKey(record.idempotencyKey);
        if (existing) return { ok: false, conflict: "idempotency", existing };
      }
      for (const nullifier of record.nullifiers) {
        const holder = this.claim(nullifier);
        if (holder) return { ok: false, conflict: "nullifier", nullifier, ...holder };
      }
      const quoteId = "action" in record.request ? record.request.action?.quoteId : undefined;
      if (quoteId !== undefined) {
        const quote = this.prepare("SELECT used_by FROM quotes WHERE id = ?").get(quoteId) as Row | undefined;
        if (!quote || quote.used_by !== null) return { ok: false, conflict: "quote", quoteId, operationId: quote ? String(quote.used_by) : null };
        this.prepare("UPDATE quotes SET used_by = ? WHERE id = ?").run(record.id, quoteId);
      }
      this
        .prepare(
          `INSERT INTO operations (id, kind, state, idempotency_key, request_hash, request, nullifiers, reason, mined_hash, block, history, created_at, updated_at, client)
           VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, ?, ?, ?, ?)`,
        )
        .run(
          record.id,
          record.kind,
          record.state,
          record.idempotencyKey,
          record.requestHash,
          JSON.stringify(record.request),
          JSON.stringify(record.nullifiers),
          JSON.stringify(record.history),
          record.createdAt,
          record.updatedAt,
          record.client ?? null,
        );
      const index = this.prepare("INSERT OR IGNORE INTO operation_nullifiers (nullifier, operation_id) VALUES (?, ?)");
      for (const nullifier of record.nullifiers) index.run(nullifier, record.id);
      if (record.idempotencyKey !== null) {
        this.prepare("INSERT INTO idempotency_keys (key, operation_id, created_at) VALUES (?, ?, ?)").run(record.idempotencyKey, record.id, record.createdAt);
      }
      return { ok: true };
    }, { operation: record.id });
    if (result.ok) this.changed(record.id);
    return result;
  }

  insertRefused(record: OperationRecord, keep: number): void {
    const dropped = this.transaction((): string[] => {
      this
        .prepare(
          `INSERT INTO operations (id, kind, state, idempotency_key, request_hash, request, nullifiers, reason, mined_hash, block, history, created_at, updated_at, client)
           VALUES (?, ?, 'rejected', NULL, ?, ?, ?, ?, NULL, NULL, ?, ?, ?, ?)`,
        )
        .run(
          record.id,
          record.kind,
          record.requestHash,
          JSON.stringify(record.request),
          JSON.stringify(record.nullifiers),
          record.reason === null ? null : JSON.stringify(record.reason),
          JSON.stringify(record.history),
          record.createdAt,
          record.updatedAt,
          record.client ?? null,
        );
      // Refused at admission: the only operations whose history begins rejected (every other begins accepted).
      const old = this
        .prepare(`SELECT id FROM operations WHERE ${REFUSED} ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?`)
        .all(Math.max(0, Math.floor(keep))) as Row[];
      const ids = old.map((row) => String(row.id));
      const drop = this.prepare("DELETE FROM operations WHERE id = ?");
      for (const id of ids) {
        drop.run(id);
        this.peeked.delete(id);
      }
      return ids;
    }, { operation: record.id });
    this.changed(record.id);
    // Gone from the store: a page listing them lists again.
    if (dropped.length > 0) this.changed(null);
  }

  onChange(listener: (operationId: string | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** After the commit: a listener sees what the store now holds; one that throws is not the writer's failure. */
  private changed(operationId: string | null): void {
    for (const listener of this.listeners) {
      try {
        listener(operationId);
      } catch {
        // a dev page's listener must never fail a relay step
      }
    }
  }

  /**
   * Runs `work` in one IMMEDIATE transaction: all of it is committed, or none. `writes`: the one operation
   * whose rows it may change, or none: the other operations' peeked records stay (a burst's writes would
   * otherwise send every client's next poll back to SQLite).
   */
  private transaction<T>(work: () => T, writes: { operation: string } | "no operation" | "any" = "any"): T {
    if (writes === "any") this.peeked.clear();
    else if (writes !== "no operation") this.peeked.delete(writes.operation);
    return this.write(() => {
      this.db.exec("BEGIN IMMEDIATE");
      try {
        const result = work();
        this.db.exec("COMMIT");
        return result;
      } catch (error) {
        // SQLite has rolled back already after some errors (a full disk, say): a second ROLLBACK would fail.
        if (this.db.isTransaction) this.db.exec("ROLLBACK");
        throw error;
      }
    });
  }

  /** A write; one the file cannot take is a StoreWriteError, and the store says so until a write succeeds. */
  private write<T>(work: () => T): T {
    try {
      const result = work();
      this.lastWriteError = null;
      return result;
    } catch (error) {
      const refused = unwritable(error);
      if (refused) this.lastWriteError = refused.message;
      throw refused ?? error;
    }
  }

  checkWritable(): string | null {
    if (this.lastWriteError === null) return null;
    try {
      // A real change (SQLite skips an update that changes nothing): it fails while the disk is still full.
      this.transaction(() => this.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('write-check', ?)").run(new Date().toISOString()), "no operation");
    } catch {
      /* still unwritable: lastWriteError says why */
    }
    return this.lastWriteError;
  }

  get(id: string): OperationRecord | undefined {
    const row = this.prepare("SELECT * FROM operations WHERE id = ?").get(id) as Row | undefined;
    return row ? this.hydrate(row) : undefined;
  }

  peek(id: string): Readonly<OperationRecord> | undefined {
    const cached = this.peeked.get(id);
    if (cached) return cached;
    const record = this.get(id);
    if (!record) return undefined;
    if (this.peeked.size >= PEEK_CACHE_SIZE) this.peeked.delete(this.peeked.keys().next().value as string);
    this.peeked.set(id, deepFreeze(record));
    return record;
  }

  private prepare(sql: string): StatementSync {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  byIdempotencyKey(key: string): OperationRecord | undefined {
    const row = this.prepare("SELECT operation_id FROM idempotency_keys WHERE key = ?").get(key) as Row | undefined;
    return row ? this.get(String(row.operation_id)) : undefined;
  }

  bindIdempotencyKey(key: string, operationId: string): OperationRecord {
    this.write(() => this.prepare("INSERT OR IGNORE INTO idempotency_keys (key, operation_id, created_at) VALUES (?, ?, ?)").run(key, operationId, new Date().toISOString()));
    return this.byIdempotencyKey(key) as OperationRecord;
  }

  twin(requestHash: string): OperationRecord | undefined {
    const row = this
      .prepare(`SELECT id FROM operations WHERE request_hash = ? AND state NOT IN ${FAILED_STATES} ORDER BY created_at DESC, rowid DESC LIMIT 1`)
      .get(requestHash) as Row | undefined;
    return row ? this.get(String(row.id)) : undefined;
  }

  claim(nullifier: string): Claim | undefined {
    // One, as an insert is refused while another operation claims a nullifier (a store of version 2 may
    // hold a copy stored after its twin was confirmed: the first is the one that spent it).
    const row = this
      .prepare(`SELECT o.id, o.state FROM operation_nullifiers n JOIN operations o ON o.id = n.operation_id WHERE n.nullifier = ? AND o.state NOT IN ${FAILED_STATES} ORDER BY o.created_at, o.rowid LIMIT 1`)
      .get(nullifier) as Row | undefined;
    return row ? { operationId: String(row.id), state: row.state as OperationState } : undefined;
  }

  liveHolder(nullifier: string): string | undefined {
    const claim = this.claim(nullifier);
    return claim && !TERMINAL_STATES.has(claim.state) ? claim.operationId : undefined;
  }

  spender(nullifier: string): string | undefined {
    const row = this
      .prepare(
        "SELECT o.id FROM operation_nullifiers n JOIN operations o ON o.id = n.operation_id WHERE n.nullifier = ? AND o.state IN ('included','confirmed') ORDER BY o.created_at DESC LIMIT 1",
      )
      .get(nullifier) as Row | undefined;
    return row ? String(row.id) : undefined;
  }

  minedActions(outputPrecommitment: string): OperationRecord[] {
    const rows = this
      .prepare("SELECT * FROM operations WHERE json_extract(request, '$.action.outputPrecommitment') = ? AND state IN ('included','confirmed') ORDER BY created_at, rowid")
      .all(outputPrecommitment) as Row[];
    return rows.map((row) => this.hydrate(row));
  }

  save(record: OperationRecord, changes: { attempt?: StoredAttempt } = {}): void {
    this.transaction(() => {
      const { attempt } = changes;
      if (attempt) {
        this.prepare("INSERT OR IGNORE INTO attempts (hash, operation_id, nonce, raw, max_fee_per_gas, max_priority_fee_per_gas, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
          .run(attempt.hash, record.id, attempt.nonce, attempt.raw, attempt.maxFeePerGas, attempt.maxPriorityFeePerGas, attempt.createdAt);
      }
      this
        .prepare("UPDATE operations SET state = ?, reason = ?, mined_hash = ?, block = ?, history = ?, updated_at = ? WHERE id = ?")
        .run(
          record.state,
          record.reason === null ? null : JSON.stringify(record.reason),
          record.minedHash,
          record.block === null ? null : JSON.stringify(record.block),
          JSON.stringify(record.history),
          record.updatedAt,
          record.id,
        );
      // Failed before anything was signed: nothing of it can be mined, so its quote may be used again.
      if (FAILED.has(record.state) && record.attempts.length === 0 && !attempt) this.prepare("UPDATE quotes SET used_by = NULL WHERE used_by = ?").run(record.id);
    }, { operation: record.id });
    this.changed(record.id);
  }

  nonTerminal(): OperationRecord[] {
    const rows = this.prepare(`SELECT * FROM operations WHERE state IN ${LIVE_STATES} ORDER BY created_at, rowid`).all() as Row[];
    return rows.map((row) => this.hydrate(row));
  }

  insertQuote(quote: StoredQuote, limits: QuoteLimits): QuoteInsertResult {
    return this.transaction((): QuoteInsertResult => {
      this.prepare("DELETE FROM quotes WHERE expires_at < ?").run(limits.deleteExpiredBefore);
      const live = this.liveQuotes(quote.client, limits.now);
      if (live.count >= limits.maxLivePerClient) return { ok: false, live: live.count, nextExpiry: live.nextExpiry ?? limits.now };
      this
        .prepare("INSERT INTO quotes (id, quote, expires_at, created_at, client) VALUES (?, ?, ?, ?, ?)")
        .run(quote.id, JSON.stringify(quote.quote), quote.expiresAt, new Date().toISOString(), quote.client);
      return { ok: true };
    }, "no operation");
  }

  getQuote(id: string): unknown {
    const row = this.prepare("SELECT quote FROM quotes WHERE id = ?").get(id) as { quote: string } | undefined;
    return row ? JSON.parse(row.quote) : undefined;
  }

  quotesWithTerms(deadline: string, amountIn: string): unknown[] {
    const rows = this.prepare("SELECT quote FROM quotes WHERE json_extract(quote, '$.deadline') = ? AND json_extract(quote, '$.amountIn') = ?").all(deadline, amountIn) as Array<{ quote: string }>;
    return rows.map((row) => JSON.parse(row.quote) as unknown);
  }

  quoteUser(id: string): string | undefined {
    const row = this.prepare("SELECT used_by FROM quotes WHERE id = ?").get(id) as Row | undefined;
    return row?.used_by == null ? undefined : String(row.used_by);
  }

  liveQuotes(client: string, now: number): { count: number; nextExpiry: number | null } {
    const row = this.prepare("SELECT COUNT(*) AS n, MIN(expires_at) AS next FROM quotes WHERE client = ? AND expires_at >= ?").get(client, now) as Row;
    return { count: Number(row.n), nextExpiry: row.next === null ? null : Number(row.next) };
  }

  countQuotes(): number {
    return Number((this.prepare("SELECT COUNT(*) AS n FROM quotes").get() as Row).n);
  }

  createdSince(at: string): OperationRecord[] {
    const rows = this.prepare("SELECT * FROM operations WHERE created_at >= ? ORDER BY created_at, id").all(at) as Row[];
    return rows.map((row) => this.hydrate(row));
  }

  countLive(client?: string): number {
    if (client !== undefined) return Number((this.prepare(`SELECT COUNT(*) AS n FROM operations WHERE client = ? AND state IN ${LIVE_STATES}`).get(client) as Row).n);
    return Number((this.prepare(`SELECT COUNT(*) AS n FROM operations WHERE state IN ${LIVE_STATES}`).get() as Row).n);
  }

  stateCounts(): Array<{ kind: string; state: string; count: number }> {
    return (this.prepare("SELECT kind, state, COUNT(*) AS n FROM operations GROUP BY kind, state").all() as Row[]).map((row) => ({ kind: String(row.kind), state: String(row.state), count: Number(row.n) }));
  }

  maxNonce(): number | undefined {
    const row = this.prepare("SELECT MAX(nonce) AS n FROM attempts").get() as Row;
    return row.n === null ? undefined : Number(row.n);
  }

  bindDeployment(identity: string): void {
    const row = this.prepare("SELECT value FROM meta WHERE key = 'deployment'").get() as Row | undefined;
    if (row === undefined) {
      this.prepare("INSERT INTO meta (key, value) VALUES ('deployment', ?)").run(identity);
    } else if (row.value !== identity) {
      throw new StoreMismatchError(`the operation store belongs to deployment ${row.value}, not ${identity}: use another store`);
    }
  }

  checkpoint(): StoreCheckpoint {
    return this.checkpoints.take((work) => this.transaction(work, "no operation"));
  }

  restore(checkpoint: StoreCheckpoint): void {
    if (this.checkpoints.restore(checkpoint, (work) => this.transaction(work))) this.changed(null);
  }

  release(checkpoint: StoreCheckpoint): void {
    this.checkpoints.release(checkpoint);
  }

  backupTo(file: string): void {
    this.prepare("VACUUM INTO ?").run(file);
  }

  close(): void {
    this.db.close();
    this.wal?.close();
  }

  private hydrate(row: Row): OperationRecord {
    return recordOf(row, this.prepare("SELECT * FROM attempts WHERE operation_id = ? ORDER BY rowid").all(String(row.id)) as Row[]);
  }

  /** Newest first, filtered in SQL (pageQuery). */
  newestFirst(page: OperationPage): OperationRecord[] {
    const { sql, args } = pageQuery(page);
    return (this.prepare(sql).all(...args) as Row[]).map((row) => this.hydrate(row));
  }

}
