/**
 * The stack's dev controls one at a time: every dev route that changes the stack, and stack.snapshot,
 * revert, reset, save and serve, whichever way they come (HTTP, the stack's API, the vitest fixtures,
 * the Hardhat plugin). A reset meeting a mine, a reorg or an alternate deployment half done left the
 * chain ahead of its start; now each waits for the one before it. A failed control frees the lock.
 */
export interface ControlLock {
  /** Runs `work` once the controls queued before it are done. */
  run<T>(work: () => Promise<T>): Promise<T>;
}

export function controlLock(): ControlLock {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    run(work) {
      const run = queue.then(work);
      queue = run.catch(() => {});
      return run;
    },
  };
}
