// exec: the stack described to a command in any language (environment variables), and that command run
// so it dies with its owner.
export { ENV_PREFIX, stackEnvironment } from "./env.ts";
export { shellCommandLine } from "./shell-quote.ts";
export { findCommand, runCommand, signalExitCode, type CommandResult, type RunningCommand } from "./command.ts";
