import path from "node:path";
import { execa } from "execa";
import { launchToFirstOutput } from "./cli-launch.ts";
import { startDevStack, type DevStack } from "../../harness/index.ts";
import { closeProvers, createQueueClient, reviewedFrom } from "../../harness/client/index.ts";
import { poolFixture, provenSend } from "../../test/support/pool.ts";
import { median } from "./stats.ts";

// How long a replay takes (issue 33, item 2), against starting a fresh stack, in one run and alternating:
// stack.replay of a reverted relay (the relayer's checks and simulation, both traces and their diff)
// against startDevStack in the same process; and `queue-devstack replay` as `git bisect run` calls it (the
// compiled CLI, a Node process each) against the compiled CLI's launch to ready (`--json`). It builds
// first. Dev proofs: the proof is not what is timed. Medians.
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const REPLAYS = Number(process.env.BENCH_REPLAYS ?? 10);

const timed = async (work: () => Promise<unknown>) => {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
};

const CLI = path.join("dist", "scripts", "cli", "queue-devstack.js");
await execa("npm", ["run", "build", "--silent"]);
const cliStart = () => launchToFirstOutput((stateDir) => [CLI, "--json", "--proofs", "dev", "--chain-port", "0", "--queue-port", "0", "--state-dir", stateDir], "bench-replay-");

const stack: DevStack = await startDevStack({ proofs: "dev" });
const fresh: number[] = [];
const replays: number[] = [];
const cli: number[] = [];
const cliFresh: number[] = [];
try {
  // A relay that reverts on chain: the verifier refuses it once ("revert next relay"); replayed, it would pass.
  const pool = await poolFixture(stack);
  const queue = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
  const { config, transaction } = await provenSend(stack, pool, queue, 2);
  stack.faults.revertNextRelay();
  const op = await queue.waitFor("send", (await queue.submit("send", config, transaction)).id);
  if (op.state !== "reverted") throw new Error(`the relay was to revert, it is ${op.state}`);
  const first = await stack.replay(op.id);
  if (first.verdict.exitCode !== 0 || !first.diff?.first) throw new Error(`the replay was to pass with a diff: ${first.text}`);

  for (let round = 0; round < RUNS; round++) {
    let other: DevStack | undefined;
    fresh.push(await timed(async () => (other = await startDevStack({ proofs: "dev" }))));
    await other?.stop();
    for (let i = 0; i < REPLAYS; i++) replays.push(await timed(() => stack.replay(op.id)));
    cliFresh.push(await cliStart());
    cli.push(
      await timed(async () => {
        const run = await execa(process.execPath, [CLI, "replay", op.id, "--state-dir", stack.stateDir], { reject: false });
        if (run.exitCode !== 0) throw new Error(`replay from the CLI exited ${run.exitCode}: ${run.stderr}`);
      }),
    );
  }
} finally {
  await closeProvers();
  await stack.stop();
}

const f = (ms: number) => `${ms.toFixed(ms < 10 ? 2 : 0)} ms`;
process.stdout.write(
  [
    `stack.replay (checks, simulation, 2 traces, diff), median of ${replays.length}: ${f(median(replays))}`,
    `startDevStack, median of ${fresh.length}:                                    ${f(median(fresh))}`,
    `ratio fresh start / stack.replay:                                ${(median(fresh) / median(replays)).toFixed(1)}x`,
    `queue-devstack replay (compiled CLI, a process), median of ${cli.length}:   ${f(median(cli))}`,
    `queue-devstack --json launch to ready (compiled), median of ${cliFresh.length}: ${f(median(cliFresh))}`,
    `ratio CLI fresh start / CLI replay:                              ${(median(cliFresh) / median(cli)).toFixed(1)}x`,
    "",
  ].join("\n"),
);
