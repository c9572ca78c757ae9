// The client in a worker thread, as in vitest's threads pool: snarkjs's web-worker dependency throws
// when it is loaded off the main thread, so importing the client must not load it, and proving must
// load it as on the main thread. The consumer test (scripts/consumer/threads.ts) runs the same through
// vitest's threads pool on the installed package.
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";

type Said = { imported?: boolean; proved?: boolean };

/** Runs test/support/client-thread.ts in a worker thread; resolves once the thread has ended by itself. */
function runClientThread(): Promise<{ said: Said[]; exitCode: number; error?: Error }> {
  const worker = new Worker(new URL("./support/client-thread.ts", import.meta.url), { execArgv: ["--experimental-strip-types", "--no-warnings=ExperimentalWarning"] });
  const said: Said[] = [];
  let error: Error | undefined;
  worker.on("message", (message: Said) => said.push(message));
  worker.on("error", (e) => (error = e));
  return new Promise((resolve) => worker.on("exit", (exitCode) => resolve({ said, exitCode, ...(error ? { error } : {}) })));
}

describe("the client in a worker thread", () => {
  it("imports, proves, and the thread ends by itself once the provers are closed", async () => {
    const { said, exitCode, error } = await runClientThread();
    expect(error).toBeUndefined();
    expect(said).toEqual([{ imported: true }, { proved: true }]);
    expect(exitCode).toBe(0);
  }, 60_000);
});
