// Compiles one .sol file with the npm solc package (solc-js, offline), off the stack's event loop: a
// compile of the Pool takes seconds, and the relayer and routes keep answering meanwhile. Node builtins
// and solc only: this file also runs as plain Node, outside any bundler or test runner.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parentPort, workerData } from "node:worker_threads";

interface Job {
  /** The folder source unit names are relative to (the project's root). */
  base: string;
  /** The project's library folders (forge's `libs`), absolute: a bare import is looked for in each. */
  libs: string[];
  /** The file's unit name, relative to base. */
  unit: string;
  /** The caller's working folder: packages (@openzeppelin/…) are found in a node_modules above it too. */
  cwd: string;
  settings: unknown;
}

/**
 * An import's file, by its source unit name (solc has applied the remappings): from the project (relative
 * to base), from a library folder as forge looks (<lib>/<name>, then <lib>/<first folder>/src/<rest>), or
 * a package in a node_modules above the project or the working folder.
 */
function findImport(job: Job, file: string): { contents: string } | { error: string } {
  const { base, libs, cwd } = job;
  const [first = "", ...rest] = file.split("/");
  const candidates = [path.resolve(base, file), ...libs.flatMap((lib) => [path.join(lib, file), path.join(lib, first, "src", ...rest)])];
  for (const from of [base, cwd]) {
    for (let dir = from; ; dir = path.dirname(dir)) {
      candidates.push(path.join(dir, "node_modules", file));
      if (path.dirname(dir) === dir) break;
    }
  }
  for (const candidate of candidates) {
    if (!existsSync(candidate)) continue;
    const contents = readFileSync(candidate, "utf8");
    read.push([candidate, sha256(contents)]);
    return { contents };
  }
  // A scoped name (@openzeppelin/contracts/…) is an npm package's: say which to install.
  const scoped = /^(@[\w.-]+\/[\w.-]+)\//.exec(file)?.[1];
  const hint = scoped ? `; if it is ${scoped}'s, npm install -D ${scoped} in your project` : "";
  return { error: `not in the project (${base}), its libs or a node_modules above it; remappings.txt or foundry.toml's remappings can map it${hint}` };
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const job = workerData as Job;
/** Every file the compile read: the caller keeps its output while none of them changes. */
const read: Array<[string, string]> = [];
let answer: { output: string; read: Array<[string, string]> } | { missingSolc: true };
try {
  const solc = ((await import("solc")) as { default: { compile(input: string, callbacks: { import: (file: string) => unknown }): string } }).default;
  const content = readFileSync(path.join(job.base, job.unit), "utf8");
  read.push([path.join(job.base, job.unit), sha256(content)]);
  const input = { language: "Solidity", sources: { [job.unit]: { content } }, settings: job.settings };
  answer = { output: solc.compile(JSON.stringify(input), { import: (file) => findImport(job, file) }), read };
} catch (error) {
  if ((error as { code?: string }).code !== "ERR_MODULE_NOT_FOUND") throw error;
  answer = { missingSolc: true };
}
parentPort?.postMessage(answer);
