// The plugin's stack runs in this worker thread. node:test under Hardhat runs the test files in
// Hardhat's own process and ends the run only when that process's event loop is empty: a stack in
// the main thread (anvil's pipes, the queue's server, the relayer's timers) would hold it open for
// ever. An unref'd worker holds nothing; the main thread talks to the stack by messages.
import { parentPort, workerData } from "node:worker_threads";
import { startDevStack, type DevStackOptions, type StackSnapshot } from "../index.ts";
import { VIEW_KEYS, type StackCall, type StackReply, type StackView } from "./stack-messages.ts";

const port = parentPort;
if (port === null) throw new Error("stack-worker.ts runs as a worker thread");

const send = (message: StackReply) => port.postMessage(message);
const setupRuns = new Map<number, { resolve: () => void; reject: (error: unknown) => void }>();
let nextSetupRun = 0;
/** Whether the last loadFixture ran its setup (the calls come one at a time: the main thread awaits each). */
let setupRan = false;

try {
  const stack = await startDevStack((workerData as { options: DevStackOptions }).options);
  const view = Object.fromEntries(VIEW_KEYS.map((key) => [key, stack[key]])) as StackView;
  // Snapshots stay here (the stack knows them by identity); the main thread holds their numbers.
  const snapshots = new Map<number, StackSnapshot>();
  let nextSnapshot = 1;
  // One stand-in per fixture of the main thread: the stack's loadFixture caches by function.
  const setups = new Map<number, () => Promise<void>>();
  const setupOf = (fixture: number) => {
    let setup = setups.get(fixture);
    if (setup === undefined) {
      // Runs the fixture's setup in the main thread (it holds the test's clients and the value).
      setup = () =>
        new Promise<void>((resolve, reject) => {
          setupRan = true;
          const run = nextSetupRun++;
          setupRuns.set(run, { resolve, reject });
          send({ setup: fixture, run });
        });
      setups.set(fixture, setup);
    }
    return setup;
  };
  port.on("message", async (message: StackCall) => {
    if ("setupDone" in message) {
      const run = setupRuns.get(message.setupDone);
      setupRuns.delete(message.setupDone);
      if (message.error === undefined) run?.resolve();
      else run?.reject(message.error);
      return;
    }
    try {
      let value: unknown;
      if (message.method === "reset") await stack.reset();
      else if (message.method === "snapshot") {
        value = nextSnapshot++;
        snapshots.set(value as number, await stack.snapshot());
      } else if (message.method === "revert") {
        const snapshot = snapshots.get(message.snapshot);
        if (snapshot === undefined) throw new Error(`queue-devstack: no snapshot ${message.snapshot}`);
        await stack.revert(snapshot);
      } else if (message.method === "loadFixture") {
        // true when the setup ran (the main thread keeps its value), false when its snapshot was restored.
        setupRan = false;
        await stack.loadFixture(setupOf(message.fixture));
        value = setupRan;
      } else if (message.method === "stop") await stack.stop();
      send({ reply: message.call, value }); // after stop, the main thread ends this thread
    } catch (error) {
      send({ reply: message.call, error });
    }
  });
  send({ ready: view });
} catch (error) {
  send({ startError: error });
  port.close();
}
