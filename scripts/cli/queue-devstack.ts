#!/usr/bin/env node
// The installed command, `npx queue-devstack`: the same as `npm run dev-stack` in this repository.
// The guard, imported first, refuses an older Node in one line before anything is loaded (the same
// line as every library entry point); then the CLI runs.
import "../../src/node-version-guard.ts";

// Node's on-disk compile cache (22.1+): later starts skip compiling viem, fastify and zod again.
const { enableCompileCache } = await import("node:module");
enableCompileCache?.();

// node:sqlite (the operation store) is experimental in Node 22 and would say so on every start.
process.removeAllListeners("warning");
process.on("warning", (warning) => {
  if (warning.name !== "ExperimentalWarning") process.stderr.write(`${warning.name}: ${warning.message}\n`);
});

await import("./dev-stack.ts");
