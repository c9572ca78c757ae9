// The Node a new user runs the consumer test's Hardhat, Foundry and node:test projects from (issue 30,
// items 7 and 8): the machine's older Node if it has one (its node, npm and npx first on PATH, nothing of
// this run's npm in the environment), following the README's recipe for it; else this Node, following
// the README's plain commands.
//
// The recipe on an older Node: `npm install -D node@22` puts Node 22 in the project, so npx and npm
// scripts run under it; then every install runs npm itself under it, `npx -p node@22 npm install …`.
// npm run by the older Node skips the optional packages whose engines ask for Node 22 (Hardhat's native
// EDR binding: HHE27 at `npx hardhat test`) and warns EBADENGINE for each package needing Node 22.
import path from "node:path";
import type { Options, ResultPromise } from "execa";

/** How the README says to install and run on the Node the test runs from. */
export interface UserNode {
  /** For step names: "from the system Node 20.20.2 (/usr/bin/node)", or "on Node 22.23.3". */
  label: string;
  /** The whole environment (pass with extendEnv: false). */
  env: Record<string, string>;
  /**
   * `npm install -D <packages>` as the README says on this Node. Its output must name no EBADENGINE, and
   * list (npm 11's install-scripts note) only these packages' install scripts, with node@22's on an older
   * Node: those the README's table explains (issue 30, item 10).
   */
  install: (cwd: string, packages: string[], scripts?: string[]) => Promise<void>;
  /** The README's `node <args>` on this Node: `npx node <args>` (the project's node@22) on an older one. */
  node: (args: string[]) => [file: string, args: string[]];
  /** The commands run here as the README gives them (it must). */
  commands: string[];
}

type Run = (file: string, args: string[], options?: Options) => ResultPromise;

/** npm's own flags for the consumer test's installs: from the cache where it can, no advice. */
const NPM_FLAGS = ["--prefer-offline", "--no-audit", "--no-fund"];

/**
 * `older`: the older Node's binary and version, if the machine has one. `tmp`: the consumer's TMPDIR.
 * `run` runs a command (inProject of scripts/consumer/test-package.ts).
 */
export function userNode(older: { file: string; version: string } | undefined, tmp: string, run: Run): UserNode {
  // What a terminal has: none of the variables `npm run test:package` set (npm_config_prefix and NODE
  // name the Node running this test), TMPDIR the consumer's own.
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !/^npm_/i.test(key) && key !== "NODE") env[key] = value;
  env.TMPDIR = tmp;
  const options = (cwd: string): Options => ({ cwd, env, extendEnv: false });
  const checked = (output: unknown, scripts: string[]): void => {
    const text = String(output ?? "");
    if (/EBADENGINE/.test(text)) throw new Error(`npm install warned EBADENGINE (npm ran under an older Node):\n${text}`);
    const unexplained = scriptsListed(text).filter((name) => !scripts.includes(name));
    if (unexplained.length > 0) throw new Error(`npm install listed install scripts the README does not explain (${unexplained.join(", ")}):\n${text}`);
  };
  if (older === undefined) {
    return {
      label: `on Node ${process.versions.node}`,
      env,
      install: async (cwd, packages, scripts = []) => checked((await run("npm", ["install", ...NPM_FLAGS, "-D", ...packages], options(cwd))).all, scripts),
      node: (args) => ["node", args],
      commands: ["node --test node-test.mjs"],
    };
  }
  env.PATH = [path.dirname(older.file), env.PATH ?? ""].join(path.delimiter);
  return {
    label: `from the system Node ${older.version} (${older.file})`,
    env,
    install: async (cwd, packages, scripts = []) => {
      await run("npm", ["install", ...NPM_FLAGS, "--loglevel=error", "-D", "node@22"], options(cwd));
      checked((await run("npx", ["-p", "node@22", "npm", "install", ...NPM_FLAGS, "-D", ...packages], options(cwd))).all, ["node", ...scripts]);
    },
    node: (args) => ["npx", ["node", ...args]],
    commands: ["npm install -D node@22", "npx -p node@22 npm install -D", "npx node --test node-test.mjs"],
  };
}

/** The packages npm 11 lists as having install scripts not yet approved in `allowScripts`. */
export function scriptsListed(output: string): string[] {
  return [...output.matchAll(/^npm warn install-scripts +(@?[^@\s]+)@\S+ \(/gm)].map((match) => match[1] as string);
}
