import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

type Gc = (options?: { type?: "major" | "minor"; execution?: "sync" | "async"; flavor?: "regular" | "last-resort" }) => void;

/** V8's gc(): the one --expose-gc gives, or, without it, from a new context once the flag is set (what jest's leak detector does). */
function v8Gc(): Gc {
  const exposed = (globalThis as { gc?: Gc }).gc;
  if (exposed) return exposed;
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as Gc;
}

/**
 * Once, delayMs from now (the timer keeps no process alive): V8's memory-reducing full collection,
 * for a process that starts, then mostly waits. The start grows V8's new space to 16-32 MB, which an idle
 * process keeps until V8's own memory reducer runs, if it ever does; this one collection gives it back
 * (15 MB of an idle stack, 50-80 ms of this thread, once). Under load the new space grows again.
 */
export function settleMemoryAfterStart(delayMs = 1000): void {
  setTimeout(() => {
    try {
      v8Gc()({ type: "major", execution: "sync", flavor: "last-resort" });
    } catch {
      // Only memory: a V8 without the flag or the option keeps what it holds.
    }
  }, delayMs).unref();
}
