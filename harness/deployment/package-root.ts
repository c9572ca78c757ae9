import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The queue-devstack package's own folder: the repository when running from source (harness/*.ts), the
 * installed package when running compiled (dist/harness/*.js under node_modules). Its data files
 * (compiled contracts, proof files) are found from here, whichever way the code runs.
 */
export const PACKAGE_ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));

/**
 * Running from the repository's sources, where the compiled fixtures may be rebuilt when stale. A
 * compiled, installed package never compiles or writes into its own folder.
 */
export const FROM_SOURCE = import.meta.url.endsWith(".ts");

function findRoot(dir: string): string {
  for (let at = dir; ; at = path.dirname(at)) {
    if (existsSync(path.join(at, "package.json")) && existsSync(path.join(at, "contracts-fixtures"))) return at;
    if (path.dirname(at) === at) throw new Error(`queue-devstack: no package folder above ${dir}`);
  }
}
