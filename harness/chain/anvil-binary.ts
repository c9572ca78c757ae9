import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);

const PLATFORM_PACKAGES: Record<string, Record<string, string>> = {
  darwin: { x64: "@foundry-rs/anvil-darwin-amd64", arm64: "@foundry-rs/anvil-darwin-arm64" },
  linux: { x64: "@foundry-rs/anvil-linux-amd64", arm64: "@foundry-rs/anvil-linux-arm64" },
  win32: { x64: "@foundry-rs/anvil-win32-amd64" },
};

/**
 * The anvil binary of this platform's package. We run it directly rather than through a Node wrapper,
 * so the PID we track is anvil's own. The package depends on these platform packages itself (optional
 * dependencies: npm installs the one matching os and cpu), not on @foundry-rs/anvil (a dev dependency
 * here, for the genesis's hash), whose postinstall only downloads the same binary when that package is
 * missing, and which npm 11 lists on every install for it (issue 30, item 10).
 */
export function anvilBinaryPath(): string {
  const override = process.env.DEVSTACK_ANVIL_BINARY;
  if (override) return override;
  const pkg = PLATFORM_PACKAGES[process.platform]?.[process.arch];
  if (!pkg) throw new Error(`no anvil binary package for ${process.platform}-${process.arch}`);
  let manifest: string;
  try {
    manifest = require.resolve(`${pkg}/package.json`);
  } catch {
    throw new Error(`${pkg} is not installed: run npm install (it is an optional dependency of queue-devstack; not with --omit=optional)`);
  }
  return path.join(path.dirname(manifest), "bin", process.platform === "win32" ? "anvil.exe" : "anvil");
}
