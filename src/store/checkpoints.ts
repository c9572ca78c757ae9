import type { DatabaseSync, StatementSync } from "node:sqlite";
import { OPERATION_TABLES } from "./schema.ts";
import type { StoreCheckpoint } from "./types.ts";

/** Runs its work in one of the store's write transactions. */
type InTransaction = (work: () => void) => void;

/**
 * A store's checkpoints: copies of the operation tables in the connection's temp schema (never in the
 * file, gone with the connection), put back by restore in one transaction.
 */
export class Checkpoints {
  private readonly db: DatabaseSync;
  private readonly ids = new Set<number>();
  private next = 1;
  /** The checkpoint the tables last equalled, and the connection's change count then: unchanged since, a restore is a no-op. */
  private matches: { checkpoint: number; changes: number } | null = null;
  /** Prepared on first use, as every statement of the store. */
  private totalChanges: StatementSync | undefined;

  constructor(db: DatabaseSync) {
    this.db = db;
  }

  take(inTransaction: InTransaction): StoreCheckpoint {
    const id = this.next++;
    inTransaction(() => {
      for (const table of OPERATION_TABLES) this.db.exec(`CREATE TEMP TABLE checkpoint_${id}_${table} AS SELECT * FROM main.${table}`);
    });
    this.ids.add(id);
    this.matches = { checkpoint: id, changes: this.changeCount() };
    return { id };
  }

  /** Puts the tables back as they were at the checkpoint; false when they already were (nothing changed). */
  restore(checkpoint: StoreCheckpoint, inTransaction: InTransaction): boolean {
    if (!this.ids.has(checkpoint.id)) throw new RangeError(`store checkpoint ${checkpoint.id} is unknown or released`);
    // A test that relayed nothing left the store as it was: skip the copy (and its fsync).
    if (this.matches?.checkpoint === checkpoint.id && this.matches.changes === this.changeCount()) return false;
    // One statement list, one call into SQLite: a test that relayed pays one round, not ten.
    inTransaction(() => {
      this.db.exec(OPERATION_TABLES.map((table) => `DELETE FROM main.${table}; INSERT INTO main.${table} SELECT * FROM temp.checkpoint_${checkpoint.id}_${table};`).join("\n"));
    });
    this.matches = { checkpoint: checkpoint.id, changes: this.changeCount() };
    return true;
  }

  release(checkpoint: StoreCheckpoint): void {
    if (!this.ids.delete(checkpoint.id)) return;
    for (const table of OPERATION_TABLES) this.db.exec(`DROP TABLE IF EXISTS temp.checkpoint_${checkpoint.id}_${table}`);
  }

  /** Rows this connection (the store's only writer) has inserted, updated or deleted since it opened. */
  private changeCount(): number {
    this.totalChanges ??= this.db.prepare("SELECT total_changes() AS n");
    return Number((this.totalChanges.get() as { n: number | bigint }).n);
  }
}
