import type { Hex } from "viem";
import type { Attempt, FailureReason, HistoryEntry, OperationKind, OperationState } from "../schemas/operation.ts";
import type { FinalizeRequest, RelayRequest } from "../schemas/request.ts";

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
