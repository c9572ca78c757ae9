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

/** Resumes a stack's relayer (as `ctl relayer resume`): a loaded bundle's live operations wait for it. */
export async function resumeRelayer(stack: DevStack): Promise<void> {
  const response = await fetch(`${stack.queueUrl}/api/dev/relayer`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ engine: "running" }) });
  if (!response.ok) throw new Error(`resume the relayer: ${response.status} ${await response.text()}`);
}

/** The relay engine's state as the health route reports it: running, paused or stopped. */
export async function engineState(stack: DevStack): Promise<string | undefined> {
  const health = (await (await fetch(`${stack.queueUrl}/api/queue/health`)).json()) as { checks?: { engine?: { state?: string } | null } };
  return health.checks?.engine?.state;
}
