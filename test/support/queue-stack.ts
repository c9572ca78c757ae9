import { afterAll, beforeAll } from "vitest";
import { startDevStack, type DevStack, type DevStackOptions } from "../../harness/index.ts";
import { closeProvers, createQueueClient, reviewedFrom, type QueueClient } from "../../harness/client/index.ts";
import { poolFixture } from "./pool.ts";

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
