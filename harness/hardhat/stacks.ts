import { rmSync } from "node:fs";
import type { HookContext } from "hardhat/types/hooks";
import { startDevStack, type DevStack } from "../index.ts";

/** One Hardhat runtime's stack: started on its first devstack connection, stopped at the end of the run. */
interface RunStack {
  started?: Promise<DevStack>;
  /** The first stack's ports, kept for a restart: Hardhat caches the network's URL for the whole run. */
  ports?: { chainPort: number; queuePort: number };
}

const byRuntime = new WeakMap<HookContext["hooks"], RunStack>();
/** Every running stack of this process, for the signal and exit handlers. */
const running = new Map<DevStack, { ownStateDir: boolean }>();

/** This Hardhat runtime's stack, started if it is not running. */
export function stackFor(context: HookContext): Promise<DevStack> {
  let run = byRuntime.get(context.hooks);
  if (run === undefined) byRuntime.set(context.hooks, (run = {}));
  const options = context.config.devstack;
  run.started ??= startDevStack({ ...options, ...run.ports }).then(
    (stack) => {
      run.ports ??= { chainPort: portOf(stack.rpcUrl), queuePort: portOf(stack.queueUrl) };
      running.set(stack, { ownStateDir: options.stateDir === undefined });
      stopOnExit();
      return stack;
    },
    (error: unknown) => {
      run.started = undefined; // the next connection tries again
      throw error;
    },
  );
  return run.started;
}

/** Stops this Hardhat runtime's stack, if it started one; the next devstack connection starts another. */
export async function stopStackOf(context: HookContext): Promise<void> {
  const run = byRuntime.get(context.hooks);
  const started = run?.started;
  if (run === undefined || started === undefined) return;
  run.started = undefined;
  const stack = await started.catch(() => undefined);
  if (stack === undefined) return;
  try {
    await stack.stop();
  } finally {
    running.delete(stack);
  }
}

const portOf = (url: string) => Number(new URL(url).port);

let handlersInstalled = false;

/**
 * Hardhat does not tell a plugin that it exits, and a test run's end is only one way out. Ctrl-C and
 * SIGTERM stop the stacks cleanly, then take their usual course; at exit (process.exit, an uncaught
 * error) there is no time for that: anvil is signalled and the stack's temp dir removed, synchronously.
 * (A SIGKILL leaves the orphan guard: anvil gets SIGTERM when this process goes.)
 */
function stopOnExit(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    const onSignal = () => {
      process.removeListener(signal, onSignal);
      void Promise.allSettled([...running.keys()].map((stack) => stack.stop().finally(() => running.delete(stack)))).then(() => {
        // Re-raised for the default action (exit by that signal), unless someone else handles it.
        if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
      });
    };
    process.on(signal, onSignal);
  }
  process.once("exit", () => {
    for (const [stack, { ownStateDir }] of running) {
      try {
        process.kill(stack.chainPid, "SIGTERM");
      } catch {
        // already gone
      }
      if (ownStateDir) rmSync(stack.stateDir, { recursive: true, force: true });
    }
  });
}
