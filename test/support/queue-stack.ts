import { afterAll, beforeAll } from "vitest";
import { startDevStack, type DevStack, type DevStackOptions } from "../../harness/index.ts";
import { closeProvers, createAccountKeys, createQueueClient, recipientOf, reviewedFrom, type QueueClient } from "../../harness/client/index.ts";
import { poolFixture } from "./pool.ts";

/** A private send of a freshly deposited 5 dUSDC note, proven against the served config, not yet submitted. */
export async function provenSend(stack: DevStack, pool: Awaited<ReturnType<typeof poolFixture>>, queue: QueueClient, from: number) {
  const config = await queue.beforePrepare();
  const keys = createAccountKeys();
  const fee = BigInt(config.relayFees.fees[0]?.send ?? "0");
  const { state, input } = await pool.fundedNote(from, keys, pool.usdc("5"));
  const { transaction } = await pool.prove({ tree: state.tree, keys, inputs: [input], outputs: [{ amount: pool.usdc("5") - fee, to: recipientOf(createAccountKeys()) }], fee, relayer: stack.relayer.address });
  return { config, transaction };
}

export interface QueueStack {
  stack: DevStack;
  pool: Awaited<ReturnType<typeof poolFixture>>;
  queue: QueueClient;
}

/**
 * A stack for a test file, with a client's view of its Pool and a queue client: started before the
 * file's tests (handed to `use`), stopped after them, the provers closed.
 */
export function withQueueStack(options: DevStackOptions, use: (started: QueueStack) => void): void {
  let stack: DevStack | undefined;
  beforeAll(async () => {
    stack = await startDevStack(options);
    const pool = await poolFixture(stack);
    use({ stack, pool, queue: createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) }) });
  }, 120_000);
  afterAll(async () => {
    await closeProvers();
    await stack?.stop();
  });
}
