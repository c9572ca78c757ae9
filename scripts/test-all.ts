import path from "node:path";
import { createInterface } from "node:readline";
import { execa } from "execa";

// `npm test` after the type-check (tsgo): vitest and the consumer test (npm run test:package) side by side, not one after
// the other. The consumer test is mostly waiting (npm installs, process launches, Ctrl-C rounds) while
// vitest keeps both cores busy, so together they take about vitest's time (issue 31: npm test within
// 8 minutes). They share nothing: the consumer test works in a temp folder of its own, on free ports,
// and checks only its own processes. Its lines are prefixed; the exit code is 1 if either failed.
const repo = path.resolve(import.meta.dirname, "..");
const strip = ["--experimental-strip-types", "--no-warnings=ExperimentalWarning"];

const vitest = execa("npx", ["vitest", "run"], { cwd: repo, stdio: "inherit", reject: false });
const pkg = execa(process.execPath, [...strip, "scripts/consumer/test-package.ts"], { cwd: repo, stdin: "ignore", all: true, buffer: false, reject: false });
createInterface({ input: pkg.all }).on("line", (line) => process.stdout.write(`[package] ${line}\n`));

const [tests, consumer] = await Promise.all([vitest, pkg]);
const failed = [tests.exitCode !== 0 && "vitest", consumer.exitCode !== 0 && "the consumer test (npm run test:package)"].filter(Boolean);
if (failed.length > 0) process.stdout.write(`\nfailed: ${failed.join(", ")}\n`);
process.exitCode = failed.length > 0 ? 1 : 0;
