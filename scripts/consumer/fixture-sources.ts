// The consumer test's `sources` part (issue 40, item 5): the package ships the fixtures' Solidity sources,
// and a user patches a stack's Pool from the installed file, as docs/patching.md and the sources' README
// say: with solc alone, the refusal names the package the imports need; with @openzeppelin/contracts
// installed too, the patch goes through. Each run is `queue-devstack exec` (a stack of its own, stopped
// after) around the documented `npx queue-devstack patch` command.
import type { HardhatConsumer } from "./hardhat.ts";

/** What the consumer test (scripts/consumer/test-package.ts) hands over: the Hardhat part's, and the consumer project (the tarball installed). */
export type FixtureSourcesConsumer = Pick<HardhatConsumer, "readme" | "step" | "inProject" | "version" | "user"> & { project: string };

/** The buggy Pool, as the installed package holds it (the file docs/patching.md names). */
const BUGGY = "node_modules/queue-devstack/contracts-fixtures/contracts/test/PoolFeeOffByOne.sol";
const PATCH = `npx queue-devstack patch Pool ${BUGGY}`;

export async function fixtureSourcesConsumer({ project, readme, step, inProject, version, user }: FixtureSourcesConsumer): Promise<void> {
  const [solc, openzeppelin] = [`solc@${await version("solc")}`, `@openzeppelin/contracts@${await version("@openzeppelin/contracts")}`];
  for (const said of [PATCH, `npm install -D ${solc} ${openzeppelin}`]) if (!readme.includes(said)) throw new Error(`the docs do not give the command run here: ${said}`);
  // On the stack exec starts (dev proofs: nothing is proved here), the documented command.
  const patch = () => inProject("npx", ["queue-devstack", "exec", "--proofs", "dev", "--", "sh", "-c", `${PATCH} --state-dir "$QUEUE_DEVSTACK_STATE_DIR"`], { reject: false, all: false });

  await step(`npm install -D ${solc} ${user.label}, then ${PATCH}: refused in one line, naming the package its imports need`, async () => {
    await user.install(project, [solc]);
    const refused = await patch();
    const lines = String(refused.stderr).trim().split("\n").filter((line) => line.startsWith("queue-devstack patch:"));
    if (refused.exitCode !== 1 || lines.length !== 1 || !/compile_failed: .*npm install -D @openzeppelin\/contracts in your project/.test(lines[0] as string)) {
      throw new Error(`without @openzeppelin/contracts: exit ${refused.exitCode}, expected 1 and one line naming it\n${String(refused.stderr)}`);
    }
  });

  await step(`npm install -D ${openzeppelin}, then ${PATCH}: the installed package's buggy Pool compiles and is patched in`, async () => {
    await user.install(project, [openzeppelin]);
    const patched = await patch();
    if (patched.exitCode !== 0 || !/^patched Pool 0x[0-9a-fA-F]{40}: code 0x[0-9a-f]{64} from .*PoolFeeOffByOne\.sol:PoolFeeOffByOne /m.test(String(patched.stdout))) {
      throw new Error(`patch from the installed source: exit ${patched.exitCode}\n${String(patched.stdout)}\n${String(patched.stderr)}`);
    }
  });
}
