/** Raw JSON-RPC over fetch: an independent way to read the chain, not the code under test. */
export async function rpc<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

export const hex = (n: number | bigint) => `0x${n.toString(16)}`;

/**
 * Waits until the node holds a transaction (pending or mined). The relayer stores an attempt as
 * "submitted" before it broadcasts it: a test that mines a block to include it must wait for this first.
 */
export async function nodeHolds(url: string, hash: string, timeoutMs = 10_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; (await rpc(url, "eth_getTransactionByHash", [hash])) === null; ) {
    if (Date.now() > deadline) throw new Error(`the node never received ${hash}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
