// The consumer test's `threads` part: vitest's threads pool (worker_threads, not child processes), where
// snarkjs's web-worker dependency throws if it is loaded at import time. In the consumer project, a test
// file that imports queue-devstack/client, then proves with it on its worker's stack, run with
// `--pool=threads`; the run must pass and end by itself (the prover's worker threads let it exit).
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { stripVTControlCharacters } from "node:util";
import type { Options, ResultPromise } from "execa";

/** What the consumer test (scripts/consumer/test-package.ts) hands over. */
export interface ThreadsConsumer {
  /** The consumer project, the tarball installed and the README's named files (its vitest config) written in it. */
  project: string;
  step: <T>(name: string, run: () => Promise<T>) => Promise<T>;
  /** Runs a command in the project; detached runs are stopped if a step fails. */
  inProject: (file: string, args: string[], options?: Options) => ResultPromise;
}

const TEST = `import { isMainThread } from "node:worker_threads";
import { afterAll, expect } from "vitest";
import { buildWitness, closeProvers, createAccountKeys, createProver, MerkleTree } from "queue-devstack/client";
import { test } from "queue-devstack/vitest";

afterAll(() => closeProvers());

test("runs in a worker thread", () => {
  expect(isMainThread).toBe(false);
});

test("proves with the client", async ({ queue }) => {
  const config = await queue.beforePrepare();
  const prover = createProver(await queue.proofFiles(config), queue.reviewed);
  const deployment = { chainId: config.chainId, poolAddress: config.poolAddress, domain: BigInt(config.domain) };
  const tree = new MerkleTree(config.queue.proof.treeDepth);
  const { signals, publicInputs } = buildWitness({ deployment, tree, keys: createAccountKeys(), asset: config.assets[0]!.address, inputs: [], outputs: [] });
  const { publicSignals } = await prover.prove(signals);
  expect(publicSignals[0]).toBe(publicInputs.root);
}, 120_000);
`;

export async function threadsConsumer({ project, step, inProject }: ThreadsConsumer): Promise<void> {
  await step("npx vitest run --pool=threads: a test importing queue-devstack/client and proving with it", async () => {
    const dir = path.join(project, "threads");
    await mkdir(dir);
    await writeFile(path.join(dir, "prove.test.ts"), TEST);
    // Bounded: a prover's worker thread left running would hold the run open.
    const run = await inProject("npx", ["vitest", "run", "--pool=threads", "threads/"], { reject: false, timeout: 300_000, env: { CI: "1" } });
    const all = stripVTControlCharacters(String(run.all ?? ""));
    if (run.exitCode !== 0 || !/Tests\s+2 passed \(2\)/.test(all)) throw new Error(`vitest's threads pool: exit ${run.exitCode}${run.timedOut ? " (did not end)" : ""}\n${all}`);
  });
}
