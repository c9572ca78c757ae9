import path from "node:path";
import { pathToFileURL } from "node:url";

/**
 * vitest globalSetup (this repository's tests only): every Node process of the run (workers, and what
 * they start: the CLI, runtimes, npm) refuses to listen on a default port (8545, 8700), through a
 * preload in NODE_OPTIONS. A test that starts anything on one fails at once, instead of only when a
 * developer's stack already holds it.
 */
export const DEFAULT_PORTS_PRELOAD = pathToFileURL(path.resolve("test/support/default-ports-refused.mjs")).href;

let outer: string | undefined;

export function setup(): void {
  outer = process.env.NODE_OPTIONS;
  process.env.NODE_OPTIONS = [outer, `--import=${DEFAULT_PORTS_PRELOAD}`].filter(Boolean).join(" ");
}

export function teardown(): void {
  if (outer === undefined) delete process.env.NODE_OPTIONS;
  else process.env.NODE_OPTIONS = outer;
}
