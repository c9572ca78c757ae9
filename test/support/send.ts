import type { DevStack } from "../../harness/index.ts";
import { createAccountKeys, recipientOf, type QueueClient } from "../../harness/client/index.ts";
import type { poolFixture } from "./pool.ts";

/** A private send of a freshly deposited 5 dUSDC note, proven against the served config, not yet submitted. */
export async function provenSend(stack: DevStack, pool: Awaited<ReturnType<typeof poolFixture>>, queue: QueueClient, from: number) {
  const config = await queue.beforePrepare();
  const keys = createAccountKeys();
  const fee = BigInt(config.relayFees.fees[0]?.send ?? "0");
  const { state, input } = await pool.fundedNote(from, keys, pool.usdc("5"));
  const { transaction } = await pool.prove({ tree: state.tree, keys, inputs: [input], outputs: [{ amount: pool.usdc("5") - fee, to: recipientOf(createAccountKeys()) }], fee, relayer: stack.relayer.address });
  return { config, transaction };
}
