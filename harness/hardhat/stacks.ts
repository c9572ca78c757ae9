import { rmSync } from "node:fs";
import { Worker } from "node:worker_threads";
import type { HookContext } from "hardhat/types/hooks";
import type { DevStackOptions } from "../index.ts";
import { watchLaunch } from "../process/index.ts";
import type { StackCall, StackReply, StackRequest, StackView } from "./stack-messages.ts";

/** A snapshot of the plugin's stack (chain and queue together), to hand back to revert(). */
export interface PluginSnapshot {
  readonly snapshot: number;
}

/** The stack in its worker thread, as the main thread drives it. */
export interface WorkerStack extends StackView {
  reset(): Promise<void>;
  snapshot(): Promise<PluginSnapshot>;
  revert(snapshot: PluginSnapshot): Promise<void>;
  loadFixture<T>(setup: () => Promise<T>): Promise<T>;
  stop(): Promise<void>;
}

// tsc's output runs the .js beside this file; the repository runs the sources.
const WORKER = new URL(import.meta.url.endsWith(".ts") ? "./stack-worker.ts" : "./stack-worker.js", import.meta.url);

/**
 * Starts a stack in a worker thread. The worker holds the event loop only while a call is under way:
 * idle, it lets the process reach its end (where node:test under Hardhat ends its run, and the plugin
 * stops the stack).
 */
export async function startWorkerStack(options: DevStackOptions): Promise<WorkerStack> {
  const worker = new Worker(WORKER, { workerData: { options } });
  const calls = new Map<number, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>();
  let nextCall = 0;
  const fixtures: Array<{ setup: () => Promise<unknown>; value: unknown }> = [];
  let started: { resolve: (view: StackView) => void; reject: (error: unknown) => void } | undefined;
  const view = new Promise<StackView>((resolve, reject) => (started = { resolve, reject }));
  const holdWhileBusy = () => (calls.size > 0 ? worker.ref() : worker.unref());

  worker.on("message", (message: StackReply) => {
    if ("ready" in message) started?.resolve(message.ready);
    else if ("startError" in message) started?.reject(message.startError);
    else if ("reply" in message) {
      const call = calls.get(message.reply);
      calls.delete(message.reply);
      if (message.error === undefined) call?.resolve(message.value);
      else call?.reject(message.error);
      holdWhileBusy();
    } else {
      // The worker's stack runs a fixture's setup: here, where the test's clients are.
      const fixture = fixtures[message.setup];
      const done = (error?: unknown) => worker.postMessage({ setupDone: message.run, error } satisfies StackCall);
      // Awaited as Hardhat's loadFixture does: a setup may throw before its promise, or return a plain value.
      if (fixture === undefined) return done(new Error(`queue-devstack: no fixture ${message.setup}`));
      Promise.resolve()
        .then(() => fixture.setup())
        .then((value) => {
          fixture.value = value;
          done();
        }, done);
    }
  });
  const gone = (error: unknown) => {
    started?.reject(error);
    for (const call of calls.values()) call.reject(error);
    calls.clear();
  };
  worker.on("error", gone);
  worker.on("exit", (code) => gone(new Error(`queue-devstack: the stack's worker thread exited (${code})`)));

  const call = (message: StackRequest) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextCall++;
      calls.set(id, { resolve, reject });
      holdWhileBusy();
      worker.postMessage({ ...message, call: id } satisfies StackCall);
    });

  const stack = await view;
  worker.unref();
  let stopping: Promise<void> | undefined;
  return {
    ...stack,
    reset: async () => void (await call({ method: "reset" })),
    snapshot: async () => ({ snapshot: (await call({ method: "snapshot" })) as number }),
    revert: async ({ snapshot }) => void (await call({ method: "revert", snapshot })),
    async loadFixture<T>(setup: () => Promise<T>): Promise<T> {
      let fixture = fixtures.findIndex((f) => f.setup === setup);
      if (fixture < 0) fixture = fixtures.push({ setup, value: undefined }) - 1;
      await call({ method: "loadFixture", fixture });
      return fixtures[fixture]?.value as T;
    },
    stop: () =>
      (stopping ??= (async () => {
        await call({ method: "stop" });
        await worker.terminate();
      })()),
  };
}

/** One Hardhat runtime's stack: started on its first devstack connection, stopped at the end of the run. */
interface RunStack {
  started?: Promise<WorkerStack>;
  /** The first stack's ports, kept for a restart: Hardhat caches the network's URL for the whole run. */
  ports?: { chainPort: number; queuePort: number };
}

const byRuntime = new WeakMap<HookContext["hooks"], RunStack>();
/** Every running stack of this process, for the exit handlers, with whether its state dir is ours to remove. */
const running = new Map<WorkerStack, { ownStateDir: boolean }>();

/** This Hardhat runtime's stack, started if it is not running. */
export function stackFor(context: HookContext): Promise<WorkerStack> {
  let run = byRuntime.get(context.hooks);
  if (run === undefined) byRuntime.set(context.hooks, (run = {}));
  const options = context.config.devstack;
  run.started ??= startWorkerStack({ ...options, ...run.ports }).then(
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
  if (stack !== undefined) await stopStack(stack);
}

async function stopStack(stack: WorkerStack): Promise<void> {
  if (!running.has(stack)) return;
  try {
    await stack.stop();
  } finally {
    running.delete(stack);
  }
}

const stopAll = () => Promise.allSettled([...running.keys()].map(stopStack));
const portOf = (url: string) => Number(new URL(url).port);

let handlersInstalled = false;

/**
 * Hardhat does not tell a plugin that it exits. When the process runs out of work (a script's end; a
 * test run's end is also a test hook), the stacks stop. Ctrl-C and SIGTERM stop them, then take their
 * usual course. So does a signal to the launch that never reaches this process: `npx hardhat test` and
 * an npm script run Hardhat under npm's `sh -c`, which keeps a SIGINT to npx's or npm's PID to itself
 * until Hardhat ends (watchLaunch sees it, as the CLI does), and a parent gone is a SIGTERM. At exit
 * (process.exit, an uncaught error) there is no time left: anvil is signalled and the stack's temp dir
 * removed, synchronously. A SIGKILL leaves the orphan guard: anvil gets SIGTERM when its thread goes.
 */
function stopOnExit(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on("beforeExit", () => {
    if (running.size > 0) void stopAll();
  });
  const signals = ["SIGINT", "SIGTERM"] as const;
  let stopping = false;
  // Once: a Ctrl-C reaches this process and wakes npm's sh too (seen by the watch), one signal of two ways.
  function stopThenRaise(signal: NodeJS.Signals): void {
    if (stopping) return;
    stopping = true;
    for (const s of signals) process.removeListener(s, stopThenRaise); // a second signal ends the process at once
    void stopAll().then(() => {
      // Re-raised for the default action (exit by that signal), unless someone else handles it.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
  for (const signal of signals) process.on(signal, stopThenRaise);
  watchLaunch(stopThenRaise);
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
