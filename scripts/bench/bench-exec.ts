import path from "node:path";
import { execa } from "execa";
import { launchToFirstOutput } from "./cli-launch.ts";
import { median } from "./stats.ts";

// The overhead of `queue-devstack exec` against the CLI alone, both the compiled CLI of the package (what
// `npx queue-devstack` runs, without npx's own start, the same for both): launch to ready (`--json`'s
// line) against launch to the command's first instruction (`exec -- sh -c 'echo started'`: its echo
// read on our side), measured alternately in the same run. Medians and their ratio. It builds first.
const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const CLI = path.join("dist", "scripts", "cli", "queue-devstack.js");

/** Launch until the first stdout data ("STATE_DIR" stands for the run's temp state dir). */
const until = (args: string[]) => launchToFirstOutput((stateDir) => [CLI, ...args.map((a) => (a === "STATE_DIR" ? stateDir : a))], "bench-exec-");

const ready = () => until(["--json", "--chain-port", "0", "--queue-port", "0", "--state-dir", "STATE_DIR"]);
const exec = () => until(["exec", "--state-dir", "STATE_DIR", "--", "sh", "-c", "echo started; sleep 5"]);

await execa("npm", ["run", "build", "--silent"]);
await ready(); // warm-up: file cache, Node's compile cache
await exec();
const alone: number[] = [];
const wrapped: number[] = [];
for (let i = 0; i < RUNS; i++) {
  alone.push(await ready());
  wrapped.push(await exec());
}
const line = (label: string, xs: number[]) =>
  console.log(`${label.padEnd(58)} median ${median(xs).toFixed(0)} ms  (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`);
console.log(`runs: ${RUNS} each, alternating`);
line("queue-devstack --json: launch -> ready", alone);
line("queue-devstack exec: launch -> the command's first output", wrapped);
console.log(`exec's overhead: ${(median(wrapped) - median(alone)).toFixed(0)} ms; ratio exec / alone: ${(median(wrapped) / median(alone)).toFixed(2)}x`);
