import path from "node:path";
import { createInterface } from "node:readline";
import { execa } from "execa";

// `npm test`: the type check (tsc -p .), vitest and the consumer test (npm run test:package) side by
// side, not one after the other. The consumer test is mostly waiting (npm installs, process launches,
// Ctrl-C rounds) and tsc is one core for a few seconds, while vitest keeps both cores busy, so together
// they take about vitest's time (issue 31 and issue 42, item 7: npm test within 8 minutes). They share
// nothing: the consumer test works in a temp folder of its own, on free ports, and checks only its own
// processes. tsc's and the consumer test's lines are prefixed; the exit code is 1 if any failed.
const repo = path.resolve(import.meta.dirname, "..");
const strip = ["--experimental-strip-types", "--no-warnings=ExperimentalWarning"];

/** A command whose output lines are printed with a prefix, as they come. */
function prefixed(prefix: string, file: string, args: string[]) {
  const run = execa(file, args, { cwd: repo, stdin: "ignore", all: true, buffer: false, reject: false });
  createInterface({ input: run.all }).on("line", (line) => process.stdout.write(`[${prefix}] ${line}\n`));
  return run;
}

const typecheck = prefixed("tsc", "npx", ["tsc", "-p", "."]);
const vitest = execa("npx", ["vitest", "run"], { cwd: repo, stdio: "inherit", reject: false });
const pkg = prefixed("package", process.execPath, [...strip, "scripts/consumer/test-package.ts"]);

const [types, tests, consumer] = await Promise.all([typecheck, vitest, pkg]);
const failed = [types.exitCode !== 0 && "the type check (tsc -p .)", tests.exitCode !== 0 && "vitest", consumer.exitCode !== 0 && "the consumer test (npm run test:package)"].filter(Boolean);
if (failed.length > 0) process.stdout.write(`\nfailed: ${failed.join(", ")}\n`);
process.exitCode = failed.length > 0 ? 1 : 0;
