import { SqliteOperationStore } from "../../src/store/store.ts";
import { sqlite } from "../../src/store/loader.ts";
import type { DatabaseSync } from "node:sqlite";
import { MAX_ROWS, STORE_COLUMNS, STORE_TABLES, type StoreRows, type StoreTable } from "../../src/store/rows.ts";
import { printable } from "../../src/printable.ts";
import { OverCapError } from "./bounded-gunzip.ts";

/**
 * The operation store's rows, read from an SQLite file: a stack's own copy when a bundle is saved, or a
 * version 1 bundle's store (an untrusted file). So it is read defensively, in a throwaway read-only
 * connection: no extension, a schema that may run no function of ours (trusted_schema off), refused if
 * it holds a trigger or a view (a view in place of a table could run for ever), and only the known
 * tables' known columns are read, at most MAX_ROWS of each and, when `maxValues` is given, at most that
 * many values (rows × columns) in all, counted before any is read: 100,000 small rows in each table fit
 * in a 32 MiB file and took node past 580 MB once read. Nothing of the file is kept but its rows, which
 * the caller then validates (src/store/rows.ts).
 */
export function readStoreRows(file: string, maxValues = Infinity): Record<string, unknown[]> {
  const db = new (sqlite().DatabaseSync)(file, { readOnly: true, allowExtension: false });
  try {
    db.exec("PRAGMA trusted_schema = OFF");
    const check = db.prepare("PRAGMA quick_check").all() as Array<Record<string, unknown>>;
    if (check.length !== 1 || Object.values(check[0] ?? {})[0] !== "ok") throw new Error("it is not an intact SQLite database");
    const entries = db.prepare("SELECT type, name FROM sqlite_master").all() as Array<{ type: string; name: string }>;
    const code = entries.find((e) => e.type !== "table" && e.type !== "index");
    if (code) throw new Error(`it holds a ${printable(String(code.type))} (${printable(String(code.name).slice(0, 60))}): an operation store holds tables and indexes only`);
    const tables = new Set(entries.filter((e) => e.type === "table").map((e) => e.name));
    if (!tables.has("operations")) throw new Error("it has no operations table");
    const read = STORE_TABLES.filter((table) => tables.has(table)); // an older store lacks some: none of those rows
    let values = 0;
    for (const table of read) {
      const { n } = db.prepare(`SELECT count(*) AS n FROM main."${table}"`).get() as { n: number };
      values += Math.min(n, MAX_ROWS + 1) * columnsOf(db, table).length;
    }
    if (values > maxValues) throw new OverCapError(`holds more than ${maxValues.toLocaleString("en-US")} values`);
    const rows: Record<string, unknown[]> = {};
    for (const table of read) {
      // Of ours, those it has (an older store lacks the newer ones: their shapes give defaults).
      const columns = columnsOf(db, table).map((c) => `"${c}"`).join(", ");
      rows[table] = db.prepare(`SELECT ${columns} FROM main."${table}" LIMIT ${MAX_ROWS + 1}`).all().map((row) => ({ ...row }));
    }
    return rows;
  } finally {
    db.close();
  }
}

/**
 * A new store file of our own schema (made by the store itself) holding `rows`, already validated: a
 * bundle's store is rebuilt row by row, never opened as it is.
 */
export function writeFreshStore(file: string, rows: StoreRows): void {
  new SqliteOperationStore(file).close();
  const db = new (sqlite().DatabaseSync)(file, { allowExtension: false });
  try {
    db.exec("BEGIN IMMEDIATE");
    for (const table of STORE_TABLES) {
      const columns = columnsOf(db, table);
      const insert = db.prepare(`INSERT INTO main."${table}" (${columns.map((c) => `"${c}"`).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`);
      for (const row of rows[table]) insert.run(...columns.map((c) => (row as Record<string, string | number | null>)[c] as string | number | null));
    }
    db.exec("COMMIT");
    // Everything in the main file: it is renamed into place alone.
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    if (db.isOpen && db.isTransaction) db.exec("ROLLBACK");
    db.close();
  }
}

/** The table's columns that are the store's (in STORE_COLUMNS), as this file has them. */
function columnsOf(db: DatabaseSync, table: StoreTable): string[] {
  const has = new Set((db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as Array<{ name: string }>).map((c) => c.name));
  return STORE_COLUMNS[table].filter((c) => has.has(c));
}
