import type { DatabaseSync } from "node:sqlite";
import type { Hex } from "viem";
import type { FailureReason, HistoryEntry, OperationKind, OperationState } from "../schemas/operation.ts";
import type { RelayRequest } from "../schemas/request.ts";
import type { OperationPage, OperationRecord } from "./types.ts";

/** The tables that hold operations; `meta` (the deployment binding) is not a checkpoint's business. */
export const OPERATION_TABLES = ["operations", "attempts", "idempotency_keys", "operation_nullifiers", "quotes"] as const;

export const SCHEMA = `
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
export const VERSION_4_INDEXES = `
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
export const SCHEMA_VERSION = 4;
/** Version 4's columns by table, added to tables made before (ALTER TABLE has no IF NOT EXISTS). */
export const VERSION_4_COLUMNS: Array<[table: string, column: string, definition: string]> = [
  ["quotes", "client", "client TEXT NOT NULL DEFAULT ''"],
  ["quotes", "used_by", "used_by TEXT"],
  ["operations", "client", "client TEXT"],
];
export const MIGRATE = `
INSERT OR IGNORE INTO idempotency_keys (key, operation_id, created_at)
  SELECT idempotency_key, id, created_at FROM operations WHERE idempotency_key IS NOT NULL;
INSERT OR IGNORE INTO operation_nullifiers (nullifier, operation_id)
  SELECT n.value, o.id FROM operations o, json_each(o.nullifiers) n;
DROP TABLE IF EXISTS live_nullifiers;
`;

/** Brings a file of an older version up to this one, in the caller's transaction. Idempotent: a file already at this version is left as it is. */
export function migrate(db: DatabaseSync): void {
  const { user_version: version } = db.prepare("PRAGMA user_version").get() as { user_version: number };
  if (version < SCHEMA_VERSION) {
    db.exec(MIGRATE);
    for (const [table, column, definition] of VERSION_4_COLUMNS) {
      const columns = (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name);
      if (!columns.includes(column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${definition}`);
    }
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  }
  db.exec(VERSION_4_INDEXES);
}

export const LIVE_STATES = "('accepted','processing','submitted','included')";
export const FAILED_STATES = "('rejected','expired','reverted')";
export const FAILED: ReadonlySet<OperationState> = new Set(["rejected", "expired", "reverted"]);
/** An operation kept of a submission refused at admission (insertRefused): its history begins rejected. */
export const REFUSED = "json_extract(history, '$[0].state') = 'rejected'";

/** A row as node:sqlite returns it. */
export type Row = Record<string, string | number | null>;

/** An operation's row and its attempts' rows, read as its record. */
export function recordOf(row: Row, attemptRows: Row[]): OperationRecord {
  const attempts = attemptRows.map((a) => ({
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
export function pageQuery(page: OperationPage): { sql: string; args: string[] } {
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
  return { sql, args };
}
