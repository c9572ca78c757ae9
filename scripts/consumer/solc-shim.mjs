#!/usr/bin/env node
// For CI on machines with no internet only: forge downloads a native solc on first use, and neither npm
// nor Debian has one here. This file answers forge as a native solc does, with the npm `solc` package
// (solc-js, the same compiler as WebAssembly) behind it; the consumer test points FOUNDRY_SOLC at it.
// forge calls it twice: `--version` (the last line's "Version: x.y.z+commit…" says which compiler), and
// `--allow-paths <dirs> --base-path <dir> [--include-path <dir>…] --standard-json` with the input on
// stdin and the output expected on stdout. A user online needs none of this.
import { readFileSync } from "node:fs";
import path from "node:path";
import solc from "solc";

const args = process.argv.slice(2);
const values = (flag) => args.flatMap((arg, i) => (arg === flag && args[i + 1] !== undefined ? args[i + 1].split(",") : []));

if (args.includes("--version")) {
  process.stdout.write(`solc, the solidity compiler commandline interface\nVersion: ${solc.version()}\n`);
} else if (args.includes("--standard-json")) {
  // forge sends every source's content; an import it did not resolve is read as solc would, from the
  // base path and the include paths (allow-paths only widen what solc may read: not enforced here).
  const roots = [...values("--base-path"), ...values("--include-path")];
  const findImports = (file) => {
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
  process.stderr.write(`solc-shim: only --version and --standard-json are supported (got: ${args.join(" ")})\n`);
  process.exitCode = 1;
}
