import { createRequire } from "node:module";
import path from "node:path";

/**
 * What `tsc <args>` in `project` reports about the package's own declarations, in tsc's words
 * ("node_modules/queue-devstack/dist/….d.ts(1,26): error TS2307: …"), with the project's own TypeScript;
 * with `projectFiles`, about the project's own files too (the documentation's files), as `tsc -p .` there.
 * The program is tsc's (its options parsed from the same command line or tsconfig.json, no skipLibCheck
 * unless given), but only those files are checked: the other packages' declarations (viem's, Fastify's,
 * vitest's), which tsc checks too, are theirs, and checking them took three quarters of tsc's time
 * (issue 42, item 7).
 */
export function ownDiagnostics(project: string, args: readonly string[], { projectFiles = false } = {}): string[] {
  const ts = createRequire(path.join(project, "package.json"))("typescript") as typeof import("typescript");
  const { options, fileNames } = commandLine(ts, project, args);
  // From the project's folder, as tsc run there: the @types it includes are the project's, not this process's.
  const host = { ...ts.createCompilerHost(options), getCurrentDirectory: () => project };
  const program = ts.createProgram(fileNames.map((file) => path.resolve(project, file)), options, host);
  const own = path.join(project, "node_modules", "queue-devstack") + path.sep;
  const dependencies = path.join(project, "node_modules") + path.sep;
  // The project's own files are those outside node_modules (TypeScript's lib files are in it too).
  const ours = (file: string) => file.startsWith(own) || (projectFiles && !file.startsWith(dependencies));
  const files = program.getSourceFiles().filter((file) => ours(path.resolve(file.fileName)));
  if (!files.some((file) => path.resolve(file.fileName).startsWith(own))) throw new Error(`tsc ${args.join(" ")}: the program holds none of the package's declarations`);
  const diagnostics = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics(), ...files.flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)])];
  return diagnostics.map((diagnostic) => ts.formatDiagnostic(diagnostic, { ...host, getNewLine: () => "\n" }).trim());
}

/** The options and root files of `tsc <args>`: from the command line, or from the tsconfig.json `-p` names. */
function commandLine(ts: typeof import("typescript"), project: string, args: readonly string[]): { options: import("typescript").CompilerOptions; fileNames: string[] } {
  const parsed = ts.parseCommandLine([...args]);
  const config = parsed.options.project === undefined ? undefined : path.resolve(project, parsed.options.project, "tsconfig.json");
  const { options, fileNames, errors } = config === undefined ? parsed : (ts.getParsedCommandLineOfConfigFile(config, parsed.options, { ...ts.sys, getCurrentDirectory: () => project, onUnRecoverableConfigFileDiagnostic: () => {} }) ?? { options: {}, fileNames: [], errors: [] });
  if (errors.length > 0 || fileNames.length === 0) throw new Error(`tsc ${args.join(" ")}: not a command line to check`);
  return { options, fileNames };
}
