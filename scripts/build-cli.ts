import path from "node:path";
import { build } from "esbuild";

// The installed CLI (`npx queue-devstack`) as one file. Started from tsc's output, Node resolves and
// compiles several hundred modules (viem, fastify, zod and theirs) on every start: a third of the
// launch-to-ready time. esbuild bundles what a start loads into dist/scripts/dev-stack.js, in place of
// tsc's file; the library entry points stay tsc's modules with their .d.ts. Left out: what a start
// never loads (snarkjs, circom_runtime and circomlibjs, imported lazily; solc and hardhat, repository-only), what
// finds files next to itself (@fastify/swagger-ui's static assets, the anvil binary package), and
// the process spawners (@viem/anvil, execa), which stay as installed.
const EXTERNAL = ["snarkjs", "circom_runtime", "circomlibjs", "solc", "hardhat", "@fastify/swagger-ui", "@foundry-rs/*", "@viem/anvil", "execa"];
// The build's folder: dist/ (npm run build), or another one given (the consumer test builds in a temp folder of its own).
const repo = path.resolve(import.meta.dirname, "..");
const dist = path.resolve(process.argv[2] ?? "dist");
const cli = path.join(dist, "scripts", "dev-stack.js");

await build({
  entryPoints: [cli],
  outfile: cli,
  // Elsewhere (the consumer test's staging folder), the same bundle as in dist/: paths (its comments)
  // from the package's folder, and the dependencies from the repository's node_modules.
  absWorkingDir: path.dirname(dist),
  nodePaths: [path.join(repo, "node_modules")],
  allowOverwrite: true,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22.13",
  external: EXTERNAL,
  // Bundled CommonJS dependencies call require(): give the ESM bundle one.
  banner: { js: "import { createRequire as __queueDevstackRequire } from 'node:module'; const require = __queueDevstackRequire(import.meta.url);" },
  logLevel: "warning",
});
// In ASCII: V8 holds a source with any other character as two bytes a character (8.8 MB for the bundle).
const { makeBuildAscii } = await import("./ascii-bundle.ts");
await makeBuildAscii(path.dirname(cli), performance.timeOrigin);
