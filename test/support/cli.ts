import { execa } from "execa";
import { builtFile, CLI_BIN_ENV } from "./cli-build.ts";

/**
 * The node arguments that run the CLI as an installed package runs it (`npx queue-devstack`): this
 * run's build of the checkout's sources (test/support/cli-build.ts). Append the CLI's own arguments.
 */
export function builtCli(): string[] {
  return [builtFile(CLI_BIN_ENV)];
}

/** The node arguments that run the CLI from source, as `npm run dev-stack` does in this repository. */
export const SOURCE_CLI = ["--experimental-strip-types", "--no-warnings", "scripts/cli/dev-stack.ts"];

/** `queue-devstack ctl <args> --state-dir <stateDir>` as installed, its result whatever the exit code. */
export const ctlCli = (stateDir: string, ...args: string[]) => execa(process.execPath, [...builtCli(), "ctl", ...args, "--state-dir", stateDir], { reject: false });
