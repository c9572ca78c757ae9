import { mkdirSync } from "node:fs";
import path from "node:path";
import type { DatabaseSync } from "node:sqlite";

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

/** The store's SQLite file, its folder made first; or ":memory:". */
export function openDatabase(file: string): DatabaseSync {
  if (file !== ":memory:") mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  return new (sqlite().DatabaseSync)(file);
}
