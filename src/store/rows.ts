import { z } from "zod";
import { Bytes32 } from "../config/primitives.ts";
import { FailureReason, HistoryEntry, OperationKind, OperationState } from "../schemas/operation.ts";
import { FinalizeRequest, RelayRequest } from "../schemas/request.ts";

/**
 * The operation store's rows as data, column for column (src/store/schema.ts), with the shape
 * each must have: what a repro bundle carries, so a store from elsewhere is rebuilt row by row in a
 * fresh store of our own schema, never opened as it is. JSON columns stay text (as stored) and are
 * checked by parsing them. `meta` is not carried: a store's deployment binding is made at start.
 */

/** A colleague's clock may run a little ahead; more, and the date is not one a store wrote. */
const CLOCK_SKEW_MS = 10 * 60 * 1000;
/** Text a stack wrote: bounded, so one row cannot be most of a bundle's cap. */
const MAX_TEXT = 64 * 1024;

/** An ISO 8601 date no later than now (with a little skew): a date in the future would never expire. */
const PastDate = z
  .string()
  .max(40)
  .refine((at) => Date.parse(at) <= Date.now() + CLOCK_SKEW_MS, "dated in the future (or not a date): a stack writes no such date");

/** A column holding JSON text whose value has `shape`. */
function jsonText<T extends z.ZodType>(shape: T) {
  return z
    .string()
    .max(MAX_TEXT)
    .superRefine((text, ctx) => {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        ctx.addIssue({ code: "custom", message: "not JSON" });
        return;
      }
      for (const issue of shape.safeParse(value).error?.issues ?? []) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path as Array<string | number> });
    });
}

const Id = z.string().min(1).max(200);
const Quantity = z.string().regex(/^(0|[1-9][0-9]{0,77})$/);

export const OperationRow = z
  .strictObject({
    id: Id,
    kind: OperationKind,
    state: OperationState,
    idempotency_key: z.string().max(255).nullable(),
    request_hash: z.string().max(200),
    request: z.string(),
    nullifiers: jsonText(z.array(z.string().max(100)).max(16)),
    reason: jsonText(FailureReason).nullable(),
    mined_hash: Bytes32.nullable(),
    block: jsonText(z.strictObject({ number: z.int().nonnegative(), hash: Bytes32 })).nullable(),
    history: jsonText(z.array(HistoryEntry.extend({ at: PastDate })).max(1000)),
    created_at: PastDate,
    updated_at: PastDate,
    /** Who submitted it (a request IP), for the per-client in-flight share; none in an older store. */
    client: z.string().max(100).nullable().default(null),
  })
  // A finalize holds a FinalizeRequest; a send or withdrawal a RelayRequest.
  .superRefine((row, ctx) => {
    const parsed = jsonText(row.kind === "finalize" ? FinalizeRequest : RelayRequest).safeParse(row.request);
    for (const issue of parsed.error?.issues ?? []) ctx.addIssue({ ...issue, code: "custom", path: ["request", ...issue.path] } as never);
  });
export type OperationRow = z.output<typeof OperationRow>;

export const AttemptRow = z.strictObject({
  hash: Bytes32,
  operation_id: Id,
  nonce: z.int().nonnegative(),
  raw: z.string().regex(/^0x([0-9a-fA-F]{2})+$/).max(2 * MAX_TEXT),
  max_fee_per_gas: Quantity,
  max_priority_fee_per_gas: Quantity,
  created_at: PastDate,
});
export type AttemptRow = z.output<typeof AttemptRow>;

export const IdempotencyKeyRow = z.strictObject({ key: z.string().min(1).max(255), operation_id: Id, created_at: PastDate });
export const NullifierRow = z.strictObject({ nullifier: z.string().min(1).max(100), operation_id: Id });
// Follows the quotes table of src/store/schema.ts: a column added there is added here (with the default
// it has there, for an older store's rows).
export const QuoteRow = z.strictObject({
  id: z.string().min(1).max(200),
  quote: jsonText(z.record(z.string(), z.unknown())),
  expires_at: z.int(),
  created_at: PastDate,
  client: z.string().max(100).default(""),
  /** The operation whose action used it: a used quote stays used in a loaded stack. */
  used_by: Id.nullable().default(null),
});

/** Rows of each table a bundle may carry; a table's row cap keeps a bundle's store to a stack's size. */
export const MAX_ROWS = 100_000;
export const STORE_ROW_SHAPES = {
  operations: OperationRow,
  attempts: AttemptRow,
  idempotency_keys: IdempotencyKeyRow,
  operation_nullifiers: NullifierRow,
  quotes: QuoteRow,
} as const;
export type StoreTable = keyof typeof STORE_ROW_SHAPES;
export const STORE_TABLES = Object.keys(STORE_ROW_SHAPES) as StoreTable[];
/** Each table's columns, in the store schema's order: the only ones read or written. */
export const STORE_COLUMNS: Record<StoreTable, string[]> = Object.fromEntries(
  STORE_TABLES.map((table) => [table, Object.keys((STORE_ROW_SHAPES[table] as unknown as { shape?: object; def?: { in?: { shape: object } } }).shape ?? {})]),
) as Record<StoreTable, string[]>;

export type StoreRows = { [T in StoreTable]: Array<z.output<(typeof STORE_ROW_SHAPES)[T]>> };

/** A table's rows, each of its shape; the first that is not is thrown, named by table, index and id. */
export function parseStoreRows(data: unknown): StoreRows {
  if (data === null || typeof data !== "object" || Array.isArray(data)) throw new Error("it is not an object of tables");
  const unknown = Object.keys(data).find((table) => !(table in STORE_ROW_SHAPES));
  if (unknown !== undefined) throw new Error(`it holds a table the store does not have (${unknown.slice(0, 60)})`);
  const rows = {} as Record<StoreTable, unknown[]>;
  for (const table of STORE_TABLES) {
    const given = (data as Record<string, unknown>)[table] ?? [];
    if (!Array.isArray(given)) throw new Error(`its ${table} is not a list of rows`);
    if (given.length > MAX_ROWS) throw new Error(`its ${table} has more than ${MAX_ROWS} rows`);
    rows[table] = given.map((row, index) => {
      const parsed = STORE_ROW_SHAPES[table].safeParse(row);
      if (parsed.success) return parsed.data;
      const issue = parsed.error.issues[0] as z.core.$ZodIssue;
      const id = (row as Record<string, unknown> | null)?.[table === "attempts" ? "hash" : table === "operation_nullifiers" ? "nullifier" : table === "idempotency_keys" ? "key" : "id"];
      const named = typeof id === "string" ? ` (${id.slice(0, 80)})` : "";
      throw new Error(`${table} row ${index}${named} is invalid: ${issue.path.join(".") || "row"}: ${issue.message}`);
    });
  }
  return rows as StoreRows;
}
