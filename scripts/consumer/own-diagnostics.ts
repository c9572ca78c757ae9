import { createRequire } from "node:module";
import path from "node:path";

/**
 * What `tsc <args>` in `project` reports about the package's own declarations, in tsc's words
 * ("node_modules/queue-devstack/dist/….d.ts(1,26): error TS2307: …"), with the project's own TypeScript.
 * The program is tsc's (its options parsed from the same command line, no skipLibCheck unless given), but
 * only the package's files are checked: the other packages' declarations (viem's, Fastify's, vitest's),
 * which tsc checks too, are theirs, and checking them took three quarters of tsc's time (issue 42, item 7).
 */
export function ownDiagnostics(project: string, args: readonly string[]): string[] {
  const ts = createRequire(path.join(project, "package.json"))("typescript") as typeof import("typescript");
  const { options, fileNames, errors } = ts.parseCommandLine([...args]);
  if (errors.length > 0 || fileNames.length === 0) throw new Error(`tsc ${args.join(" ")}: not a command line to check`);
  // From the project's folder, as tsc run there: the @types it includes are the project's, not this process's.
  const host = { ...ts.createCompilerHost(options), getCurrentDirectory: () => project };
  const program = ts.createProgram(fileNames.map((file) => path.resolve(project, file)), options, host);
  const own = path.join(project, "node_modules", "queue-devstack") + path.sep;
  const files = program.getSourceFiles().filter((file) => path.resolve(file.fileName).startsWith(own));
  if (files.length === 0) throw new Error(`tsc ${args.join(" ")}: the program holds none of the package's declarations`);
  const diagnostics = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics(), ...files.flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)])];
  return diagnostics.map((diagnostic) => ts.formatDiagnostic(diagnostic, { ...host, getNewLine: () => "\n" }).trim());
}
