import { statSync } from "node:fs";
import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds each slow file took in a whole `npm test` (two workers and the consumer test alongside, this
 * kind of machine; issue 42, item 7): where a clean clone has no timings of its own yet. Only the order
 * matters: a file missing here runs after these. (dev-stack-cli ran first there, beside the consumer
 * test's build and installs: 107 s, 27 s alone.)
 */
export const KNOWN_SECONDS: Readonly<Record<string, number>> = {
  "test/dev-stack-cli.test.ts": 107,
  "test/pool-protocol.test.ts": 58,
  "test/bundle-untrusted.test.ts": 50,
  "test/fuzz.test.ts": 42,
  "test/exec.test.ts": 37,
  "test/fork.test.ts": 37,
  "test/actions-client.test.ts": 36,
  "test/dashboard.test.ts": 34,
  "test/client-trust.test.ts": 31,
  "test/hardhat-plugin.test.ts": 28,
  "test/reset-property.test.ts": 26,
  "test/orphans.test.ts": 25,
  "test/playwright.test.ts": 23,
  "test/dev-controls.test.ts": 23,
  "test/runtime-faults.test.ts": 20,
  "test/bundle.test.ts": 17,
  "test/reset-soak.test.ts": 16,
  "test/bundle-abort.test.ts": 16,
  "test/faults.test.ts": 15,
  "test/repro-story.test.ts": 13,
  "test/replay.test.ts": 13,
  "test/finalize-fee.test.ts": 11,
  "test/bundle-property.test.ts": 11,
  "test/relay.test.ts": 10,
  "test/runtime-standalone.test.ts": 9,
  "test/relay-engine.test.ts": 9,
  "test/seed.test.ts": 8,
  "test/config-switch.test.ts": 8,
};

/** What a real-proofs file is taken to take with no timing of its own: each proves (a guess, not measured). */
const REAL_PROOFS_SECONDS = 30;

/**
 * The longest files first, whatever their project, so that the two workers end together: vitest's own
 * order runs one project after the other (the real-proofs lane, all proving, came last) and, without a
 * previous run's timings (a clean clone), the largest files first. A file's time is its last run's
 * (vitest's cache), else KNOWN_SECONDS, else REAL_PROOFS_SECONDS in that lane, else 0; the larger file
 * first between equals.
 */
export class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const estimate = (spec: TestSpecification): number => {
      const cached = this.ctx.cache.getTestSpecificationResult(spec)?.duration;
      if (cached !== undefined) return cached / 1000;
      const known = KNOWN_SECONDS[path.relative(this.ctx.config.root, spec.moduleId).split(path.sep).join("/")];
      return known ?? (spec.project.name === "real-proofs" ? REAL_PROOFS_SECONDS : 0);
    };
    const rank = new Map(files.map((spec) => [spec, [estimate(spec), sizeOf(spec.moduleId)] as const]));
    return [...files].sort((a, b) => {
      const [[ea, sa], [eb, sb]] = [rank.get(a) ?? [0, 0], rank.get(b) ?? [0, 0]];
      return eb - ea || sb - sa;
    });
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
