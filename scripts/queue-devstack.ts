#!/usr/bin/env node
// The installed command, `npx queue-devstack`: the same as `npm run dev-stack` in this repository.
// It checks the Node version in one line before anything is loaded (an older Node would fail with a
// stack trace on `node:sqlite`), then runs the CLI.

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  process.stderr.write(`queue-devstack needs Node.js 22.13 or later; this is ${process.version}. Install Node 22 LTS, or add the "node" package (22.x) as a dev dependency so npm scripts run under it.\n`);
  process.exit(1);
}

// Node's on-disk compile cache (22.1+): later starts skip compiling viem, fastify and zod again.
const { enableCompileCache } = await import("node:module");
enableCompileCache?.();

// node:sqlite (the operation store) is experimental in Node 22 and would say so on every start.
process.removeAllListeners("warning");
process.on("warning", (warning) => {
  if (warning.name !== "ExperimentalWarning") process.stderr.write(`${warning.name}: ${warning.message}\n`);
});

await import("./dev-stack.ts");
