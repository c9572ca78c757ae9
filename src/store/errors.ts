import { accessSync, constants } from "node:fs";
import path from "node:path";
import { QueueDevstackError } from "../errors/index.ts";

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

export function unwritable(error: unknown, file?: string): StoreWriteError | null {
  const errcode = (error as { errcode?: unknown }).errcode;
  let kind = typeof errcode === "number" ? UNWRITABLE.get(errcode & 0xff) : undefined;
  // SQLite says "disk I/O error" for a read-only filesystem too; the folder says which it is.
  if (kind !== undefined && file !== undefined) kind = folderProblem(path.dirname(path.resolve(file))) ?? kind;
  const store = file === undefined ? "the operation store" : `the operation store ${file}`;
  return kind === undefined ? null : new StoreWriteError(`${store} cannot be written (${kind}): ${(error as Error).message}`, { cause: error });
}
