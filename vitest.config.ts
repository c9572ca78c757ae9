import { defineConfig } from "vitest/config";
import { SlowestFirst } from "./test/support/slowest-first.ts";

/**
 * The real-proof lane: every stack these files start verifies real Groth16 proofs, as a user's default
 * stack does. They keep what the circuit and the verifier own: the proof files and their pins, the
 * circuit's constraints against hostile witnesses, the verifier's refusals (on the Pool), one full relay
 * of each kind end to end (send and withdraw; action and finalize), a bundle and a fork. The consumer
 * test (npm run test:package) proves for real too. Every other file runs on dev proofs
 * (QUEUE_DEVSTACK_PROOFS=dev): the witness is still computed in full, nothing is proved.
 */
const REAL_PROOFS = [
  "test/circuit.test.ts",
  "test/proof-files.test.ts",
  "test/client-trust.test.ts",
  "test/client-threads.test.ts",
  "test/pool-protocol.test.ts",
  "test/relay.test.ts",
  "test/actions-client.test.ts",
  "test/bundle.test.ts",
  "test/fork.test.ts",
];

/**
 * Files that check the whole process (the modules it loaded, the files it holds open) or set what holds
 * for a whole worker: each runs in a process of its own. Every other file shares its worker's process
 * with the files before it (isolate: false), as a user's suite may: vitest, viem, Fastify and the harness
 * are loaded and compiled once a worker, not once a file (issue 42, item 7: about a quarter of the
 * suite's CPU). So a worker's stack (queue-devstack/vitest) lives on into its later files.
 */
const OWN_PROCESS = [
  "test/runtime-compilers.test.ts",
  "test/review-start-failed-start.test.ts",
  // Its worker's stack options and fixture, named at the file's top level: with isolate false they would
  // hold for the worker's later files (docs/vitest.md, Named starting states).
  "test/seed.test.ts",
];

export default defineConfig({
  test: {
    // Each project names its files (a root include would be merged into both).
    // Real anvil processes and real transactions: generous, but bounded.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    isolate: false,
    // Two files at a time on a 2-core machine: with most relays costing a witness, not a 2 s proof on
    // every core, two workers no longer starve each other (issue 31; undo this line alone if they do).
    maxWorkers: 2,
    // The longest files first, across both projects, so that the two workers end together (issue 42, item 7).
    sequence: { sequencer: SlowestFirst },
    // First, the run's own TMPDIR, which must be empty at the end (every test removes what it made), and
    // default ports refused in every process of the run (tests use free ports); the CLI built once, as
    // installed, for the tests that launch it; then queue-devstack's own globalSetup (as a user's config
    // names it: "queue-devstack/vitest/global-setup").
    globalSetup: ["test/support/run-tmpdir.ts", "test/support/default-ports.ts", "test/support/cli-build.ts", "harness/vitest/global-setup/index.ts"],
    projects: [
      { extends: true, test: { name: "real-proofs", include: REAL_PROOFS, env: { QUEUE_DEVSTACK_PROOFS: "groth16" } } },
      { extends: true, test: { name: "dev-proofs", include: ["test/**/*.test.ts"], exclude: [...REAL_PROOFS, ...OWN_PROCESS], env: { QUEUE_DEVSTACK_PROOFS: "dev" } } },
      { extends: true, test: { name: "own-process", include: OWN_PROCESS, isolate: true, env: { QUEUE_DEVSTACK_PROOFS: "dev" } } },
    ],
  },
});
