import { copyFile, mkdir, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { build } from "esbuild";
import { bundleCli, NODE_TARGET } from "../../scripts/build/cli-bundle.ts";
import { RUN_CLI } from "./run-tmpdir.ts";

/** The environment variable that names the built bin (dist/scripts/cli/queue-devstack.js) to test/support/cli.ts. */
export const CLI_BIN_ENV = "QUEUE_DEVSTACK_TEST_CLI";
/** The environment variable that names the built operator runtime (runtime/main.js) to test/support/runtime-process.ts. */
export const RUNTIME_BIN_ENV = "QUEUE_DEVSTACK_TEST_RUNTIME";

const repo = path.resolve(import.meta.dirname, "..", "..");

/** The file this run's build left at the path `env` names (CLI_BIN_ENV, RUNTIME_BIN_ENV); a clear error outside this repository's vitest.config.ts. */
export function builtFile(env: string): string {
  const file = process.env[env];
  if (file === undefined) throw new Error(`${env} is not set: run the tests through this repository's vitest.config.ts, whose globalSetup (test/support/cli-build.ts) builds the CLI and the runtime`);
  return file;
}

/**
 * vitest globalSetup (this repository's tests only), after run-tmpdir.ts: the CLI as `npx queue-devstack`
 * runs it, built once a run from this checkout's sources into the run's TMPDIR (a run cache, removed with
 * it). The tests that launch the CLI to check what it does (its refusals, signals, sub-commands) launch
 * this build: 0.5 CPU-seconds to ready, against 1.3 from source, where Node resolves and strips some
 * 1,300 modules each time (issue 42, item 7). The launches from source that a contributor's
 * `npm run dev-stack` makes keep tests of their own (test/dev-stack-cli.test.ts).
 *
 * The folder is laid out as the installed package: package.json, contracts-fixtures and node_modules
 * (links to this checkout's), and in dist/ the bin (scripts/cli/queue-devstack.ts: the Node guard, the
 * warnings filter, then the bundle), the bundle (scripts/build/cli-bundle.ts, as `npm run build` makes it),
 * and the compiler's worker, which a bundle finds there (harness/patch/source.ts).
 *
 * Beside it, in runtime/, the operator's runtime (src/main.ts) bundled the same way, for the tests that run
 * it in a process of its own to check what it does: 0.2 CPU-seconds to its help, against 0.7 from source
 * (issue 42, item 7). `npm run queue-runtime`'s own path, from source, keeps its tests
 * (test/runtime-standalone.test.ts).
 */
export async function setup(): Promise<void> {
  const stage = path.join(tmpdir(), RUN_CLI);
  const cli = path.join(stage, "dist", "scripts", "cli");
  await mkdir(cli, { recursive: true });
  await copyFile(path.join(repo, "package.json"), path.join(stage, "package.json"));
  for (const linked of ["contracts-fixtures", "node_modules"]) await symlink(path.join(repo, linked), path.join(stage, linked));
  await Promise.all([
    // The bin: its code and the Node guard's (a module of its own in tsc's output, the same code), then
    // the bundle beside it.
    build({
      entryPoints: [path.join(repo, "scripts", "cli", "queue-devstack.ts")],
      outdir: cli,
      bundle: true,
      ...NODE_TARGET,
      plugins: [{ name: "bundle-beside", setup: (b) => b.onResolve({ filter: /^\.\/dev-stack\.ts$/ }, () => ({ path: "./dev-stack.js", external: true })) }],
      logLevel: "warning",
    }),
    // Node builtins and solc only: transpiled alone, as tsc does.
    build({ entryPoints: [path.join(repo, "harness", "patch", "compile-worker.ts")], outdir: path.join(stage, "dist", "harness", "patch"), ...NODE_TARGET, logLevel: "warning" }),
  ]);
  // The folder is new: every .js in it is a build's, made ASCII-only (the bin's comments too).
  const runtime = path.join(stage, "runtime");
  await Promise.all([bundleCli(path.join(repo, "scripts", "cli", "dev-stack.ts"), cli, repo, 0), bundleCli(path.join(repo, "src", "main.ts"), runtime, repo, 0)]);
  process.env[CLI_BIN_ENV] = path.join(cli, "queue-devstack.js");
  process.env[RUNTIME_BIN_ENV] = path.join(runtime, "main.js");
}

export function teardown(): void {
  delete process.env[CLI_BIN_ENV];
  delete process.env[RUNTIME_BIN_ENV];
}
