import { readFile } from "node:fs/promises";
import path from "node:path";
import { build, type Plugin } from "esbuild";
import { makeBuildAscii } from "./ascii-bundle.ts";

// The installed CLI (`npx queue-devstack`) as a bundle. Started from tsc's output, Node resolves and
// compiles several hundred modules (viem, fastify, zod and theirs) on every start: a third of the
// launch-to-ready time. esbuild bundles what a start loads into dist/scripts/cli/dev-stack.js, in place of
// tsc's file; the library entry points stay tsc's modules with their .d.ts. Left out: what a start
// never loads (snarkjs, circom_runtime and circomlibjs, imported lazily; solc and hardhat, repository-only)
// and what finds files next to itself (the anvil binary package). @fastify/swagger-ui finds its static
// assets next to itself too, but is bundled (see below).
// The process spawners (execa, @viem/anvil) are bundled: as installed, Node resolved and compiled their
// hundred-odd small modules on every start (bench:startup, issue 32).
const EXTERNAL = ["snarkjs", "circom_runtime", "circomlibjs", "solc", "hardhat", "@fastify/swagger-ui/static/*", "@foundry-rs/*"];

// @fastify/swagger-ui, bundled: as installed, its registration at every start required its routes,
// @fastify/static, glob and a second yaml as CommonJS, resolved and compiled one by one (~40 ms). Its
// two files that find its assets by __dirname find them in the installed package (a dependency) instead.
const SWAGGER_UI_FILE = /[\\/]node_modules[\\/]@fastify[\\/]swagger-ui[\\/](index|lib[\\/]routes)\.js$/;
const swaggerUiAssets: Plugin = {
  name: "swagger-ui-assets",
  setup(build) {
    build.onLoad({ filter: SWAGGER_UI_FILE }, async (args) => {
      const installed = 'require("node:path").dirname(require.resolve("@fastify/swagger-ui"))';
      const dir = args.path.endsWith("index.js") ? installed : `require("node:path").join(${installed}, "lib")`;
      return { contents: (await readFile(args.path, "utf8")).replaceAll("__dirname", `(${dir})`), loader: "js", resolveDir: path.dirname(args.path) };
    });
  },
};
// node:http as CommonJS: an ES import of it makes Node build the module's ES facade, which reads every
// export, and its lazy WebSocket, CloseEvent and MessageEvent load undici (~20 ms of a launch's CPU:
// --cpu-prof) though a launch calls no fetch before it is ready. require() reads none of them.
const BUILTIN_AS_REQUIRE = /^(node:)?http$/;
const httpByRequire: Plugin = {
  name: "http-by-require",
  setup(build) {
    // Its import statements only: the require() that stands in for them is Node's own.
    build.onResolve({ filter: BUILTIN_AS_REQUIRE }, (args) => (args.kind === "import-statement" ? { path: args.path, namespace: "builtin-by-require" } : { path: args.path, external: true }));
    build.onLoad({ filter: /.*/, namespace: "builtin-by-require" }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: "js" }));
  },
};
const repo = path.resolve(import.meta.dirname, "..", "..");

/** What the CLI's files are built for: ES modules for the package's oldest Node. */
export const NODE_TARGET = { platform: "node", format: "esm", target: "node22.13" } as const;

/**
 * Bundles the CLI whose start is `entry` (tsc's dist/scripts/cli/dev-stack.js, or the source's
 * scripts/cli/dev-stack.ts: esbuild strips the types as Node does) into `outdir`, as dev-stack.js and its
 * chunks. `workingDir`: the package's folder, which the bundle's comments name paths from. The .js files
 * under outdir written since `since` (ms since the epoch; this process's start by default) are this
 * build's, made ASCII-only.
 */
export async function bundleCli(entry: string, outdir: string, workingDir: string, since = performance.timeOrigin): Promise<void> {
  await build({
    entryPoints: [entry],
    // What is imported with import() (the sub-commands, what a start loads only once anvil is spawned) goes
    // to chunks of its own, loaded when asked for; dev-stack.js keeps its name.
    outdir,
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    // Elsewhere (the consumer test's staging folder, the test run's), the same bundle as in dist/: paths
    // (its comments) from the package's folder, and the dependencies from the repository's node_modules.
    absWorkingDir: workingDir,
    nodePaths: [path.join(repo, "node_modules")],
    allowOverwrite: true,
    bundle: true,
    ...NODE_TARGET,
    external: EXTERNAL,
    plugins: [swaggerUiAssets, httpByRequire],
    // Less for Node to read, decode and parse on every start. Identifiers are not minified (stack traces
    // stay readable); keepNames is off as before: its __name() call on every function created cost ~14 ms
    // in noble's precomputation alone (--cpu-prof), and no code here reads a function's or class's name
    // (errors set theirs).
    minifyWhitespace: true,
    minifySyntax: true,
    // Bundled CommonJS dependencies call require(): give the ESM bundle one.
    banner: { js: "import { createRequire as __queueDevstackRequire } from 'node:module'; const require = __queueDevstackRequire(import.meta.url);" },
    logLevel: "warning",
  });
  // In ASCII: V8 holds a source with any other character as two bytes a character (8.8 MB for the bundle).
  await makeBuildAscii(outdir, since);
}
