import type { Hex } from "viem";
import type { DevStack } from "../../harness/index.ts";
import type { QueueClient } from "../../harness/client/index.ts";
import { poolFixture, provenSend } from "./pool.ts";
import { rpc } from "./rpc.ts";

/** A dev control over HTTP, as a client sends it: its status and JSON body. */
export async function devControl(stack: DevStack, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${stack.queueUrl}/api/dev/${path}`, { method: "POST", ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The chain's head, read straight from anvil. */
export const headOf = (stack: DevStack) => rpc<{ number: Hex; hash: Hex }>(stack.rpcUrl, "eth_getBlockByNumber", ["latest", false]);

/** A fresh deposit of dev account `from`, sent privately through the queue: the state it ends in. */
export async function relayState(stack: DevStack, pool: Awaited<ReturnType<typeof poolFixture>>, queue: QueueClient, from: number): Promise<string> {
  const { config, transaction } = await provenSend(stack, pool, queue, from);
  return (await queue.waitFor("send", (await queue.submit("send", config, transaction)).id)).state;
}
