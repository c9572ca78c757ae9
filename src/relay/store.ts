import { accessSync, closeSync, constants, fsync, mkdirSync, openSync } from "node:fs";
import path from "node:path";
import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { Hex } from "viem";
import { TERMINAL_STATES, type Attempt, type FailureReason, type HistoryEntry, type OperationKind, type OperationState } from "./operation.ts";
import type { RelayRequest } from "./request.ts";
import type { FinalizeRequest } from "./request.ts";
import { QueueDevstackError } from "../errors/index.ts";

/** An attempt as stored: with the signed raw transaction, so it can be re-broadcast after a crash. */
export interface StoredAttempt extends Attempt {
  raw: Hex;
}

/** Everything the runtime knows about an operation. The request holds public fields only. */
export interface OperationRecord {
  id: string;
  kind: OperationKind;
  state: OperationState;
  idempotencyKey: string | null;
  requestHash: string;
  request: RelayRequest | FinalizeRequest;
  nullifiers: string[];
  reason: FailureReason | null;
  attempts: StoredAttempt[];
  minedHash: Hex | null;
  block: { number: number; hash: Hex } | null;
  history: HistoryEntry[];
  createdAt: string;
  updatedAt: string;
  /** Who submitted it (the request's IP), for the per-client share of the in-flight limit; absent if unknown. */
  client?: string;
}

export type InsertResult =
  | { ok: true }
  | { ok: false; conflict: "idempotency"; existing: OperationRecord }
  | { ok: false; conflict: "nullifier"; nullifier: string; operationId: string; state: OperationState }
  /** The action's quote is used by another operation, or (null) is not stored at all. */
  | { ok: false; conflict: "quote"; quoteId: string; operationId: string | null };

/** A signed quote as stored: the JSON the client was given, who asked for it, until when it may be used. */
export interface StoredQuote {
  id: string;
  quote: unknown;
  /** Unix seconds. */
  expiresAt: number;
  /** Who asked (the request's IP): the cap on live quotes is per client. */
  client: string;
}

/** What insertQuote keeps to: the per-client cap, and the expired quotes it deletes first (unix seconds). */
export interface QuoteLimits {
  now: number;
  maxLivePerClient: number;
  deleteExpiredBefore: number;
}

export type QuoteInsertResult = { ok: true } | { ok: false; live: number; nextExpiry: number };

/** The operation of ours that claims a nullifier, and its state. */
export interface Claim {
  operationId: string;
  state: OperationState;
}

/**
 * Where operations live. One runtime process owns one store (it is the single writer for its relayer
 * key). A multi-instance operator deployment would put this behind PostgreSQL instead: the same rows,
 * `SELECT ... FOR UPDATE SKIP LOCKED` to hand operations to workers, and an advisory lock per relayer
 * key so that nonce assignment and signing stay serialized across instances.
 */
export interface OperationStore {
  /**
   * Inserts an operation and claims its nullifiers, atomically; or says what it collided with. A
   * nullifier stays claimed by an operation that is live, included or confirmed: only a failure frees it
   * (a confirmed one spent it, and a copy checked before that must not be stored after it). An action
   * also consumes its quote, in the same transaction: a quote is used once (a failure before any
   * attempt was signed releases it, see save).
   */
  insert(record: OperationRecord): InsertResult;
  /**
   * Keeps a submission refused at admission as an operation (`rejected`, its history beginning so): it
   * claims no nullifier, idempotency key or quote, so a later submission of the same is judged afresh.
   * Then deletes the oldest of such operations beyond the newest `keep`.
   */
  insertRefused(record: OperationRecord, keep: number): void;
  get(id: string): OperationRecord | undefined;
  /**
   * The operation, for reading only (it is frozen): status answers. Cached between writes, since
   * clients poll the same few operations many times a second.
   */
  peek(id: string): Readonly<OperationRecord> | undefined;
  /** The operation an idempotency key names (several keys may name one operation). */
  byIdempotencyKey(key: string): OperationRecord | undefined;
  /** Binds a key to an operation unless it is bound already; returns the operation the key names. */
  bindIdempotencyKey(key: string, operationId: string): OperationRecord;
  /** The operation of an identical request (same kind and body) that has not failed, if any. */
  twin(requestHash: string): OperationRecord | undefined;
  /** The operation claiming a nullifier (live, included or confirmed), if any. */
  claim(nullifier: string): Claim | undefined;
  /** The live operation holding a nullifier, if any. */
  liveHolder(nullifier: string): string | undefined;
  /** Our mined operation (included or confirmed) that spends a nullifier, if any. */
  spender(nullifier: string): string | undefined;
  /**
   * Our mined actions (included or confirmed) whose output note has this precommitment (a decimal
   * string, as requests carry it), oldest first: found by an index, so a finalize never scans the chain's logs.
   */
  minedActions(outputPrecommitment: string): OperationRecord[];
  /**
   * Persists the operation's state, reason, mined hash, block and history, in one transaction with a
   * new signed attempt (stored before it is broadcast). A failed state frees its nullifiers, and, with
   * no attempt ever signed (nothing was broadcast), its quote.
   */
  save(record: OperationRecord, changes?: { attempt?: StoredAttempt }): void;
  /**
   * Resolves once every commit so far is on disk (fsync of the WAL, off the main thread; callers at
   * the same moment share one). Commits survive the process being killed as soon as they are made; a
   * power loss only once flushed. An acceptance is flushed before its 202, an attempt before its broadcast;
   * other state changes are read from the chain again if a power loss takes them.
   */
  flush(): Promise<void>;
  nonTerminal(): OperationRecord[];
  /**
   * Stores a signed quote, to check the action that cites it; in one transaction, first deletes the
   * quotes expired before `limits.deleteExpiredBefore`, then refuses if the client already holds
   * `maxLivePerClient` unexpired ones (saying how many, and when the soonest of them expires).
   */
  insertQuote(quote: StoredQuote, limits: QuoteLimits): QuoteInsertResult;
  getQuote(id: string): unknown;
  /**
   * The stored quotes (their JSON, as getQuote) with this deadline and input amount (decimal strings):
   * a reservation's terms, to learn whether this runtime quoted an action it did not relay.
   */
  quotesWithTerms(deadline: string, amountIn: string): unknown[];
  /** The operation that used a quote (its action was stored), if any. */
  quoteUser(id: string): string | undefined;
  /** How many unexpired quotes a client holds, and when the soonest of them expires (unix seconds). */
  liveQuotes(client: string, now: number): { count: number; nextExpiry: number | null };
  /** Quotes stored, expired or not (metrics, the soak benchmark). */
  countQuotes(): number;
  /** Operations accepted at or after this time (ISO 8601), oldest first. */
  createdSince(at: string): OperationRecord[];
  /** A page of operations, newest first, filtered in SQL (a dev page's list). */
  newestFirst(page: OperationPage): OperationRecord[];
  /** Live operations: all, or one client's. */
  countLive(client?: string): number;
  /**
   * Null when the store can be written; else why the last write failed (a full disk, say). After a
   * failure it tries a write that changes nothing first, so it notices the room made since.
   */
  checkWritable(): string | null;
  /** How many operations are in each kind and state (for metrics). */
  stateCounts(): Array<{ kind: string; state: string; count: number }>;
  /** Highest nonce of any stored attempt. */
  maxNonce(): number | undefined;
  /**
   * Binds the store to one deployment (chain id, Pool, deployment block hash): its operations are
   * signed transactions for that chain, and must never be re-broadcast anywhere else.
   */
  bindDeployment(identity: string): void;
  /**
   * Copies every operation, attempt, key and nullifier as they are now (a test harness's snapshot):
   * `restore` puts them back exactly, in one transaction, after the chain was reverted to the same moment.
   */
  checkpoint(): StoreCheckpoint;
  restore(checkpoint: StoreCheckpoint): void;
  /** Frees a checkpoint's copy; a released checkpoint cannot be restored. */
  release(checkpoint: StoreCheckpoint): void;
  /** A consistent copy of the whole store in a new SQLite file (VACUUM INTO). */
  backupTo(file: string): void;
  /**
   * Calls `listener` after every committed change: an operation's id once it is inserted or saved, or
   * null when many may have changed at once (a restore). Returns its removal. With no listener, a write
   * costs nothing more.
   */
  onChange(listener: (operationId: string | null) => void): () => void;
  close(): void;
}

/** A copy of the store's operations at one moment (see OperationStore.checkpoint). */
export interface StoreCheckpoint {
  readonly id: number;
}

/** A page of operations, newest first (SqliteOperationStore.newestFirst). */
export interface OperationPage {
  limit: number;
  kind?: OperationKind;
  /** true: actions only; false: withdrawals that are not actions. */
  action?: boolean;
  state?: OperationState;
  /** Created at or after this time (ISO 8601). */
  since?: string;
  /** A finalize's reservation (any case). */
  reservationId?: string;
  /** This operation only. */
  id?: string;
  /** The operation that signed this transaction (any of its attempts; any case). */
  transactionHash?: string;
  /** Older than this one. */
  before?: { createdAt: string; id: string };
}

/** The tables that hold operations; `meta` (the deployment binding) is not a checkpoint's business. */
const OPERATION_TABLES = ["operations", "attempts", "idempotency_keys", "operation_nullifiers", "quotes"] as const;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS operations (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  state TEXT NOT NULL,
  idempotency_key TEXT UNIQUE,
  request_hash TEXT NOT NULL,
  request TEXT NOT NULL,
  nullifiers TEXT NOT NULL,
  reason TEXT,
  mined_hash TEXT,
  block TEXT,
  history TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  client TEXT
);
CREATE INDEX IF NOT EXISTS operations_state ON operations(state);
CREATE INDEX IF NOT EXISTS operations_created ON operations(created_at, id);
CREATE TABLE IF NOT EXISTS attempts (
  hash TEXT PRIMARY KEY,
  operation_id TEXT NOT NULL,
  nonce INTEGER NOT NULL,
  raw TEXT NOT NULL,
  max_fee_per_gas TEXT NOT NULL,
  max_priority_fee_per_gas TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_operation ON attempts(operation_id);
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS idempotency_keys (
  key TEXT PRIMARY KEY,
  operation_id TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS operation_nullifiers (
  nullifier TEXT NOT NULL,
  operation_id TEXT NOT NULL,
  PRIMARY KEY (nullifier, operation_id)
);
CREATE INDEX IF NOT EXISTS operations_request_hash ON operations(request_hash);
-- Submissions refused at admission (kept by a dev stack), oldest first: the ones past its cap are deleted.
CREATE INDEX IF NOT EXISTS operations_refused ON operations(json_extract(history, '$[0].state'), created_at);
-- An action's output precommitment (the Pool keeps it in the reservation): a refund's finalize finds the action it belongs to.
CREATE INDEX IF NOT EXISTS operations_action_precommitment ON operations(json_extract(request, '$.action.outputPrecommitment'));
CREATE TABLE IF NOT EXISTS quotes (
  id TEXT PRIMARY KEY,
  quote TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  client TEXT NOT NULL DEFAULT '',
  used_by TEXT
);
`;

/** Indexes on columns a migration may only now have added: created after it. */
const VERSION_4_INDEXES = `
CREATE INDEX IF NOT EXISTS quotes_expires_at ON quotes(expires_at);
CREATE INDEX IF NOT EXISTS quotes_client ON quotes(client, expires_at);
CREATE INDEX IF NOT EXISTS operations_client ON operations(client, state);
`;

/**
 * Version 1 stored an operation's key in operations.idempotency_key (one key per operation) and indexed
 * only live nullifiers. Version 2 has a table of keys (several may name one operation) and indexes the
 * nullifiers of every operation. Version 3 drops the table of live nullifiers, which confirmation
 * emptied: a nullifier's claim is its operation's state (claimed unless it failed). Version 4 gives a
 * quote the client that asked for it (the per-client cap) and the operation that used it (a quote is
 * used once), and an operation the client that submitted it (its share of the in-flight limit); rows
 * stored before have none. An older file is brought up to date when it is opened.
 */
const SCHEMA_VERSION = 4;
/** Version 4's columns by table, added to tables made before (ALTER TABLE has no IF NOT EXISTS). */
const VERSION_4_COLUMNS: Array<[table: string, column: string, definition: string]> = [
  ["quotes", "client", "client TEXT NOT NULL DEFAULT ''"],
  ["quotes", "used_by", "used_by TEXT"],
  ["operations", "client", "client TEXT"],
];
const MIGRATE = `
INSERT OR IGNORE INTO idempotency_keys (key, operation_id, created_at)
  SELECT idempotency_key, id, created_at FROM operations WHERE idempotency_key IS NOT NULL;
INSERT OR IGNORE INTO operation_nullifiers (nullifier, operation_id)
  SELECT n.value, o.id FROM operations o, json_each(o.nullifiers) n;
DROP TABLE IF EXISTS live_nullifiers;
`;

type Sqlite = typeof import("node:sqlite");
let sqliteModule: Sqlite | undefined;

/**
 * node:sqlite, loaded when a store is first opened rather than imported: a static import fails at link
 * time on a Node without it, before any version check could say so. Loading it warns that SQLite is
 * experimental, on every start and in every worker: that one warning is dropped, no other.
 */
export function sqlite(): Sqlite {
  if (sqliteModule) return sqliteModule;
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const type = typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    const message = typeof warning === "string" ? warning : warning.message;
    if (type === "ExperimentalWarning" && message.startsWith("SQLite is an experimental feature")) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    sqliteModule = process.getBuiltinModule?.("node:sqlite") as Sqlite | undefined;
  } finally {
    process.emitWarning = emitWarning;
  }
  if (!sqliteModule) throw new Error(`the operation store needs node:sqlite (Node >= 22.13); this is Node ${process.versions.node}`);
  return sqliteModule;
}

export class StoreInUseError extends QueueDevstackError {
  override name = "StoreInUseError";
  readonly code = "store_in_use";
}

export class StoreMismatchError extends QueueDevstackError {
  override name = "StoreMismatchError";
  readonly code = "store_mismatch";
}

/** The store's file cannot be written (disk full, read-only, I/O error): nothing of the write was kept. */
export class StoreWriteError extends QueueDevstackError {
  override name = "StoreWriteError";
  readonly code = "store_write_failed";
}

/** Why a folder cannot be written to, when the filesystem says so (root included: a read-only mount). */
function folderProblem(folder: string): string | null {
  try {
    accessSync(folder, constants.W_OK);
    return null;
  } catch (error) {
    const code = (error as { code?: string }).code;
    return code === "EROFS" ? "read-only filesystem" : code === "EACCES" || code === "EPERM" ? "no write permission" : null;
  }
}

/** SQLite's primary result codes that mean the file cannot be written, not that the write was wrong. */
const UNWRITABLE = new Map([
  [8, "read-only"], // SQLITE_READONLY
  [10, "I/O error"], // SQLITE_IOERR
  [13, "disk full"], // SQLITE_FULL
  [14, "cannot open"], // SQLITE_CANTOPEN
]);

function unwritable(error: unknown, file?: string): StoreWriteError | null {
  const errcode = (error as { errcode?: unknown }).errcode;
  let kind = typeof errcode === "number" ? UNWRITABLE.get(errcode & 0xff) : undefined;
  // SQLite says "disk I/O error" for a read-only filesystem too; the folder says which it is.
  if (kind !== undefined && file !== undefined) kind = folderProblem(path.dirname(path.resolve(file))) ?? kind;
  const store = file === undefined ? "the operation store" : `the operation store ${file}`;
  return kind === undefined ? null : new StoreWriteError(`${store} cannot be written (${kind}): ${(error as Error).message}`, { cause: error });
}

const LIVE_STATES = "('accepted','processing','submitted','included')";
const FAILED_STATES = "('rejected','expired','reverted')";
const FAILED: ReadonlySet<OperationState> = new Set(["rejected", "expired", "reverted"]);
/** An operation kept of a submission refused at admission (insertRefused): its history begins rejected. */
const REFUSED = "json_extract(history, '$[0].state') = 'rejected'";

type Row = Record<string, string | number | null>;

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
  private readonly checkpoints = new Set<number>();
  private nextCheckpoint = 1;
  /** The checkpoint the tables last equalled, and the connection's change count then: unchanged since, a restore is a no-op. */
  private matches: { checkpoint: number; changes: number } | null = null;
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
  private readonly wal: number | null = null;
  /** flush() calls so far, and how many of them a finished sync covers. */
  private flushesAsked = 0;
  private flushesDone = 0;
  private syncing: Promise<void> | null = null;

  constructor(file: string) {
    if (file !== ":memory:") mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.db = new (sqlite().DatabaseSync)(file);
    // WAL: a commit survives the process being killed at any instant, and a power loss once flush()
    // has synced it (NORMAL: SQLite itself syncs only at checkpoints). EXCLUSIVE locking, taken by a
    // first write: one runtime per store, so one writer per relayer key (a second one is refused).
    try {
      this.db.exec("PRAGMA busy_timeout = 2000; PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
      this.db.exec(SCHEMA);
      // Also takes the exclusive lock. Idempotent: a file already at this version is left as it is.
      this.transaction(() => {
        const { user_version: version } = this.prepare("PRAGMA user_version").get() as { user_version: number };
        if (version < SCHEMA_VERSION) {
          this.db.exec(MIGRATE);
          for (const [table, column, definition] of VERSION_4_COLUMNS) {
            const columns = (this.db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name);
            if (!columns.includes(column)) this.db.exec(`ALTER TABLE ${table} ADD COLUMN ${definition}`);
          }
          this.db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
        }
        this.db.exec(VERSION_4_INDEXES);
      });
    } catch (error) {
      this.db.close();
      if (/locked|busy/i.test((error as Error).message)) throw new StoreInUseError(`the operation store ${file} is in use by another runtime`);
      throw unwritable(error, file) ?? error;
    }
    if (file !== ":memory:") this.wal = openSync(`${file}-wal`, "r");
  }

  flush(): Promise<void> {
    if (this.wal === null) return Promise.resolve();
    return this.syncFor(++this.flushesAsked);
  }

  /** Syncs until one sync that started after flush call `ticket` has finished: concurrent callers share syncs. */
  private async syncFor(ticket: number): Promise<void> {
    while (this.flushesDone < ticket) {
      if (!this.syncing) {
        const covers = this.flushesAsked;
        this.syncing = new Promise<void>((resolve, reject) => fsync(this.wal as number, (error) => (error ? reject(error) : resolve())))
          .then(() => void (this.flushesDone = Math.max(this.flushesDone, covers)))
          .catch((error: unknown) => {
            const refused = new StoreWriteError(`the operation store could not be synced to disk: ${(error as Error).message}`, { cause: error });
            this.lastWriteError = refused.message;
            throw refused;
          })
          .finally(() => void (this.syncing = null));
      }
      await this.syncing;
    }
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
    const id = this.nextCheckpoint++;
    // Copies in the connection's temp schema: never in the file, gone with the connection.
    this.transaction(() => {
      for (const table of OPERATION_TABLES) this.db.exec(`CREATE TEMP TABLE checkpoint_${id}_${table} AS SELECT * FROM main.${table}`);
    }, "no operation");
    this.checkpoints.add(id);
    this.matches = { checkpoint: id, changes: this.changeCount() };
    return { id };
  }

  restore(checkpoint: StoreCheckpoint): void {
    if (!this.checkpoints.has(checkpoint.id)) throw new RangeError(`store checkpoint ${checkpoint.id} is unknown or released`);
    // A test that relayed nothing left the store as it was: skip the copy (and its fsync).
    if (this.matches?.checkpoint === checkpoint.id && this.matches.changes === this.changeCount()) return;
    // One statement list, one call into SQLite: a test that relayed pays one round, not ten.
    this.transaction(() => {
      this.db.exec(OPERATION_TABLES.map((table) => `DELETE FROM main.${table}; INSERT INTO main.${table} SELECT * FROM temp.checkpoint_${checkpoint.id}_${table};`).join("\n"));
    });
    this.matches = { checkpoint: checkpoint.id, changes: this.changeCount() };
    this.changed(null);
  }

  backupTo(file: string): void {
    this.prepare("VACUUM INTO ?").run(file);
  }

  /** Rows this connection (the store's only writer) has inserted, updated or deleted since it opened. */
  private changeCount(): number {
    return Number((this.prepare("SELECT total_changes() AS n").get() as { n: number | bigint }).n);
  }

  release(checkpoint: StoreCheckpoint): void {
    if (!this.checkpoints.delete(checkpoint.id)) return;
    for (const table of OPERATION_TABLES) this.db.exec(`DROP TABLE IF EXISTS temp.checkpoint_${checkpoint.id}_${table}`);
  }

  close(): void {
    this.db.close();
    if (this.wal !== null) closeSync(this.wal);
  }

  private hydrate(row: Row): OperationRecord {
    const attempts = (this.prepare("SELECT * FROM attempts WHERE operation_id = ? ORDER BY rowid").all(String(row.id)) as Row[]).map((a) => ({
      hash: String(a.hash) as Hex,
      nonce: Number(a.nonce),
      raw: String(a.raw) as Hex,
      maxFeePerGas: String(a.max_fee_per_gas),
      maxPriorityFeePerGas: String(a.max_priority_fee_per_gas),
      createdAt: String(a.created_at),
    }));
    return {
      id: String(row.id),
      kind: row.kind as OperationKind,
      state: row.state as OperationState,
      idempotencyKey: row.idempotency_key === null ? null : String(row.idempotency_key),
      requestHash: String(row.request_hash),
      request: JSON.parse(String(row.request)) as RelayRequest,
      nullifiers: JSON.parse(String(row.nullifiers)) as string[],
      reason: row.reason === null ? null : (JSON.parse(String(row.reason)) as FailureReason),
      attempts,
      minedHash: row.mined_hash === null ? null : (String(row.mined_hash) as Hex),
      block: row.block === null ? null : (JSON.parse(String(row.block)) as { number: number; hash: Hex }),
      history: JSON.parse(String(row.history)) as HistoryEntry[],
      createdAt: String(row.created_at),
      updatedAt: String(row.updated_at),
      ...(row.client === null || row.client === undefined ? {} : { client: String(row.client) }),
    };
  }

  /**
   * Newest first (created_at, id), filtered in SQL, at most `limit`: a page of a long list costs its own
   * size. `before` is the cursor (the last one of the page before); `action` tells an action (a
   * withdrawal with an action's terms) from a plain withdrawal.
   */
  newestFirst(page: OperationPage): OperationRecord[] {
    const where: string[] = [];
    const args: string[] = [];
    const add = (sql: string, ...values: string[]) => void (where.push(sql), args.push(...values));
    if (page.kind) add("kind = ?", page.kind);
    if (page.action !== undefined) where.push(`json_extract(request, '$.action') IS ${page.action ? "NOT " : ""}NULL`);
    if (page.state) add("state = ?", page.state);
    if (page.since) add("created_at >= ?", page.since);
    if (page.reservationId) add("lower(json_extract(request, '$.reservationId')) = lower(?)", page.reservationId);
    if (page.id) add("id = ?", page.id);
    if (page.transactionHash) add("id IN (SELECT operation_id FROM attempts WHERE lower(hash) = lower(?))", page.transactionHash);
    if (page.before) add("(created_at < ? OR (created_at = ? AND id < ?))", page.before.createdAt, page.before.createdAt, page.before.id);
    const sql = `SELECT * FROM operations${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY created_at DESC, id DESC LIMIT ${Math.max(0, Math.floor(page.limit))}`;
    return (this.prepare(sql).all(...args) as Row[]).map((row) => this.hydrate(row));
  }
}
