#!/usr/bin/env node
// The installed `queue-devstack-solc`: a solc for forge with no network. forge downloads a native solc
// on its first compile; offline, FOUNDRY_SOLC names a compiler instead, and this command answers forge
// as a native solc does, with the npm `solc` package (solc-js, the same compiler as WebAssembly) behind
// it: the user installs the release their pragmas accept (an optional peer dependency).
//
// forge calls it twice: `--version` (the last line's "Version: x.y.z+commit…" says which compiler), and
// `--allow-paths <dirs> --base-path <dir> [--include-path <dir>…] --standard-json` with the input on
// stdin and the output expected on stdout. No Node version guard: forge starts it with whichever `node`
// is first on PATH, and solc-js runs on any maintained Node.
import { readFileSync } from "node:fs";
import path from "node:path";

const USAGE = [
  "queue-devstack-solc: the npm solc package behind a native solc's command line, for forge offline:",
  "  FOUNDRY_SOLC=node_modules/.bin/queue-devstack-solc forge test",
  "It needs the npm solc package of the release your pragmas accept (npm install -D solc@0.8.30).",
  "It answers --version and --standard-json, as forge asks.",
].join("\n");

interface SolcJs {
  version(): string;
  compile(input: string, callbacks: { import: (file: string) => { contents: string } | { error: string } }): string;
}

async function loadSolc(): Promise<SolcJs> {
  try {
    return ((await import("solc")) as { default: SolcJs }).default;
  } catch (error) {
    if ((error as { code?: string }).code !== "ERR_MODULE_NOT_FOUND") throw error;
    process.stderr.write("queue-devstack-solc needs the npm solc package: npm install -D solc@0.8.30 (or the release your pragmas accept)\n");
    process.exit(1);
  }
}

const args = process.argv.slice(2);
const values = (flag: string) => args.flatMap((arg, i) => (arg === flag && args[i + 1] !== undefined ? (args[i + 1] as string).split(",") : []));

if (args.includes("--help") || args.length === 0) {
  process.stdout.write(`${USAGE}\n`);
} else if (args.includes("--version")) {
  process.stdout.write(`solc, the solidity compiler commandline interface\nVersion: ${(await loadSolc()).version()}\n`);
} else if (args.includes("--standard-json")) {
  const solc = await loadSolc();
  // forge sends every source's content; an import it did not resolve is read as solc would, from the
  // base path and the include paths (allow-paths only widen what solc may read: not enforced here).
  const roots = [...values("--base-path"), ...values("--include-path")];
  const findImports = (file: string) => {
    for (const root of roots.length > 0 ? roots : [process.cwd()]) {
      try {
        return { contents: readFileSync(path.resolve(root, file), "utf8") };
      } catch {
        // try the next root
      }
    }
    return { error: `File not found: ${file}` };
  };
  process.stdout.write(solc.compile(readFileSync(0, "utf8"), { import: findImports }));
} else {
  process.stderr.write(`queue-devstack-solc: only --version and --standard-json are supported (got: ${args.join(" ")})\n${USAGE}\n`);
  process.exitCode = 1;
}
