import { createHash } from "node:crypto";
import type { OperationKind } from "../schemas/operation.ts";
import type { FinalizeRequest, RelayRequest } from "../schemas/request.ts";

/** What makes two submissions the same (an idempotent retry, a twin): the sha256 of their kind and body. */
export function hashRequest(kind: OperationKind, request: RelayRequest | FinalizeRequest): string {
  return createHash("sha256").update(canonicalJson({ kind, request })).digest("hex");
}

/** JSON with sorted keys: the same request always hashes the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}
