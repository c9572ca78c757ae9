import { afterAll, beforeAll } from "vitest";
import { startDevStack, type DevStack, type DevStackOptions } from "../../harness/index.ts";
import { closeProvers, createQueueClient, reviewedFrom, type QueueClient } from "../../harness/client/index.ts";
import { poolFixture } from "./pool.ts";

/** What a file's stack set-up hands its tests: the stack, and with `client`, a client's view of it. */
export interface QueueStack {
  stack: DevStack;
  pool: Awaited<ReturnType<typeof poolFixture>>;
  queue: QueueClient;
}

export interface StackSetUp {
  /**
   * startDevStack's options. A function is called when the stack starts, after the hooks registered
   * before this set-up (a temp dir, another stack's URL).
   * @defaultValue `{}`
   */
  options?: DevStackOptions | (() => DevStackOptions | Promise<DevStackOptions>);
  /**
   * Also hand back `pool` (the Pool seen from a client: its proof files fetched, a prover) and `queue`
   * (a queue client of the stack); false skips the proof files' download.
   * @defaultValue true
   */
  client?: boolean;
  /**
   * The set-up hook's timeout (ms), for the start and `use` together.
   * @defaultValue 120_000 with a client (the proof files and a prover, on a busy machine), else the config's hookTimeout
   */
  timeout?: number;
}

/**
 * One stack for a test file, or for the describe block it is called in: started before its tests
 * (handed to `use`, which may go on with the block's own set-up), stopped after them, the provers
 * closed. Hooks registered after this call run after `use`, and their afterAll before the stop.
 * @example
 * let stack: DevStack;
 * withQueueStack({ client: false, options: { store: ":memory:" } }, (s) => ({ stack } = s));
 */
export function withQueueStack(setUp: StackSetUp & { client: false }, use: (started: Pick<QueueStack, "stack">) => unknown): void;
export function withQueueStack(setUp: StackSetUp, use: (started: QueueStack) => unknown): void;
export function withQueueStack(setUp: StackSetUp, use: (started: QueueStack) => unknown): void {
  const { options = {}, client = true, timeout = client ? 120_000 : undefined } = setUp;
  let stack: DevStack | undefined;
  beforeAll(async () => {
    stack = await startDevStack(typeof options === "function" ? await options() : options);
    if (!client) return void (await use({ stack } as QueueStack));
    const pool = await poolFixture(stack);
    await use({ stack, pool, queue: createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) }) });
  }, timeout);
  afterAll(async () => {
    await closeProvers();
    await stack?.stop();
  });
}
