import { nodeFetch } from "../../src/chain/node-fetch.ts";
import { QueueDevstackError } from "../../src/errors/index.ts";

/** A JSON-RPC error answer, or a call that got no usable answer. */
export class JsonRpcError extends QueueDevstackError {
  override name = "JsonRpcError";
  readonly code = "json_rpc_failed";
}

let nextId = 1;

/**
 * One plain JSON-RPC call to anvil, for the harness's dev methods (anvil_*, evm_*, debug_*) that
 * viem's typed actions do not cover, on a kept-alive connection: by node:http (the runtime's nodeFetch),
 * as fetch would load undici on a stack's start path (~20 ms) and cost twice the CPU per call.
 */
export async function jsonRpc<T>(url: string, method: string, params: unknown[] = [], options: { timeoutMs?: number } = {}): Promise<T> {
  const response = await nodeFetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
    ...(options.timeoutMs ? { signal: AbortSignal.timeout(options.timeoutMs) } : {}),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new JsonRpcError(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** Calls that do not depend on one another, in one JSON-RPC batch (one round trip); results in order. */
export async function jsonRpcBatch(url: string, calls: Array<[method: string, params?: unknown[]]>): Promise<unknown[]> {
  const ids = calls.map(() => nextId++);
  const response = await nodeFetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(calls.map(([method, params = []], i) => ({ jsonrpc: "2.0", id: ids[i], method, params }))),
  });
  const answers = (await response.json()) as Array<{ id: number; result?: unknown; error?: { message: string } }>;
  return ids.map((id, i) => {
    const answer = answers.find((a) => a.id === id);
    if (!answer || answer.error) throw new JsonRpcError(`${calls[i]?.[0]}: ${answer?.error?.message ?? "no answer"}`);
    return answer.result;
  });
}
