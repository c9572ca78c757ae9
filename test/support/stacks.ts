import { afterAll } from "vitest";
import { startDevStack, type DevStack, type DevStackOptions } from "../../harness/index.ts";

/**
 * startDevStack for stacks a test starts itself: each is stopped after the file's tests, also when a
 * test failed before its own stop() (a second stop() does nothing). Call it at the top of the file.
 */
export function withStacks(): (options?: DevStackOptions) => Promise<DevStack> {
  const started: DevStack[] = [];
  afterAll(async () => {
    await Promise.all(started.splice(0).map((stack) => stack.stop()));
  });
  return async (options) => {
    const stack = await startDevStack(options);
    started.push(stack);
    return stack;
  };
}
