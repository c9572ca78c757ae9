import path from "node:path";
import { createInterface } from "node:readline";
import { execa } from "execa";

// `npm test`: three runs side by side, not one after the other: tsc -p . (the whole repository
// type-checks), vitest, and the consumer test (npm run test:package). The consumer test is mostly waiting
// (npm installs, process launches, Ctrl-C rounds) while vitest keeps both cores busy, so together they
// take about vitest's time (issue 31: npm test within 8 minutes); tsc, on one core for some 25 s, was the
// run's only step before the others (issue 42, item 7). They share nothing: tsc writes nothing, the
// consumer test works in a temp folder of its own, on free ports, and checks only its own processes.
// tsc's and the consumer test's lines are prefixed; the exit code is 1 if any failed, and says which.
const repo = path.resolve(import.meta.dirname, "..");
const strip = ["--experimental-strip-types", "--no-warnings=ExperimentalWarning"];

const typecheck = execa(process.execPath, [path.join(repo, "node_modules", "typescript", "bin", "tsc"), "-p", "."], { cwd: repo, stdin: "ignore", all: true, buffer: false, reject: false });
createInterface({ input: typecheck.all }).on("line", (line) => process.stdout.write(`[tsc] ${line}\n`));
const vitest = execa("npx", ["vitest", "run"], { cwd: repo, stdio: "inherit", reject: false });
const pkg = execa(process.execPath, [...strip, "scripts/consumer/test-package.ts"], { cwd: repo, stdin: "ignore", all: true, buffer: false, reject: false });
createInterface({ input: pkg.all }).on("line", (line) => process.stdout.write(`[package] ${line}\n`));

const [types, tests, consumer] = await Promise.all([typecheck, vitest, pkg]);
const failed = [types.exitCode !== 0 && "tsc -p .", tests.exitCode !== 0 && "vitest", consumer.exitCode !== 0 && "the consumer test (npm run test:package)"].filter(Boolean);
if (failed.length > 0) process.stdout.write(`\nfailed: ${failed.join(", ")}\n`);
process.exitCode = failed.length > 0 ? 1 : 0;
