import { existsSync } from "node:fs";
import path from "node:path";
import { startDevStack, type DevStack } from "../../harness/index.ts";
import { median } from "./stats.ts";

// What a patch costs against what it saves (issue 33): a fresh stack start, the alternative to patching
// (and it loses the repro's state), against patching the Pool of a running stack from a .sol file and
// from a Hardhat artifact (no compile). The Pool alternates between the buggy fixture and its own source,
// so each patch changes the code; the first patch of each .sol compiles it, later ones reuse the compile
// (the files it read unchanged). Rounds interleave. Medians.
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const CONTRACTS = path.resolve("contracts-fixtures/contracts");
const SOURCES = [path.join(CONTRACTS, "test", "PoolFeeOffByOne.sol"), path.join(CONTRACTS, "Pool.sol")];
// Written by npm run build:contracts (not committed): the same two contracts as Hardhat artifacts.
const ARTIFACTS = [path.resolve("contracts-fixtures/artifacts/contracts-fixtures/contracts/test/PoolFeeOffByOne.sol/PoolFeeOffByOne.json"), path.resolve("contracts-fixtures/artifacts/contracts-fixtures/contracts/Pool.sol/Pool.json")];
const withArtifacts = ARTIFACTS.every((file) => existsSync(file));

const timed = async (work: () => Promise<unknown>) => {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
};

const fresh: number[] = [];
const fromSource: number[] = [];
const compiles: number[] = [];
const fromArtifact: number[] = [];
const stack = await startDevStack();
try {
  for (let i = 0; i < RUNS; i++) {
    let other: DevStack | undefined;
    fresh.push(await timed(async () => (other = await startDevStack())));
    await other?.stop();
    (i < 2 ? compiles : fromSource).push(await timed(() => stack.patch("Pool", SOURCES[i % 2] as string)));
    if (withArtifacts) fromArtifact.push(await timed(() => stack.patch("Pool", ARTIFACTS[(i + 1) % 2] as string)));
  }
} finally {
  await stack.stop();
}

const f = (ms: number) => `${ms.toFixed(0)} ms`;
process.stdout.write(
  [
    `fresh stack start, median of ${RUNS}:             ${f(median(fresh))}`,
    `patch the Pool from a .sol file, compiling it (the first of each file), mean of 2: ${f((compiles[0] as number) / 2 + (compiles[1] as number) / 2)}  (ratio / fresh start: ${((compiles[0] as number) / 2 / median(fresh) + (compiles[1] as number) / 2 / median(fresh)).toFixed(2)}x)`,
    `patch the Pool from a .sol file again (compile kept), median: ${f(median(fromSource))}  (ratio / fresh start: ${(median(fromSource) / median(fresh)).toFixed(2)}x)`,
    withArtifacts
      ? `patch the Pool from a Hardhat artifact, median:    ${f(median(fromArtifact))}  (ratio / fresh start: ${(median(fromArtifact) / median(fresh)).toFixed(2)}x)`
      : "patch from a Hardhat artifact: not measured (npm run build:contracts writes the artifacts)",
    "",
  ].join("\n"),
);
