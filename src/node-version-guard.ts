import { writeSync } from "node:fs";

// Imported first by every entry point of the package (the harness, the client, the runtime, the vitest
// integration, the CLI). On an older Node it prints one line and exits before anything that needs
// Node 22 runs: ES modules are evaluated in import order, so being first is enough, provided that
// nothing in the graph fails to *link* there (that happens before any module runs, hence the store
// loads node:sqlite at run time). So this module imports only what every Node has.

export const MINIMUM_NODE = "22.13";

/** The one-line refusal for this Node version, or undefined when it is recent enough. */
export function unsupportedNode(version: string = process.versions.node): string | undefined {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const [needMajor = 0, needMinor = 0] = MINIMUM_NODE.split(".").map(Number);
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return undefined;
  return `queue-devstack needs Node.js ${MINIMUM_NODE} or later; this is v${version}. Install Node 22 LTS, or add the "node" package (22.x) as a dev dependency so npm scripts and npx run under it.`;
}

const refusal = unsupportedNode();
if (refusal !== undefined) {
  // Synchronous: process.exit does not wait for a pending write to a pipe.
  writeSync(2, `${refusal}\n`);
  process.exit(1);
}
