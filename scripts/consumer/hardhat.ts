// The consumer test's Hardhat part (issue 20): the README's Hardhat 3 project, made from the packed
// tarball in a folder of its own (outside the consumer project, whose tsc and vitest must not see it),
// type-checked, then `npx hardhat test` (node:test runner) passing and leaving no process and no temp
// folder, a `hardhat run` script ending by itself, and a Ctrl-C during a test leaving none either. All of
// it from the machine's older Node if it has one, as the README says to install and run there (issue 30,
// item 7: npm run by Node 20 skipped Hardhat's native EDR package, and `npx hardhat test` failed HHE27).
//
// Offline CI: Hardhat's build step fetches the solc release list even without contracts. The run takes
// the docs' offline config (offline.hardhat.config.ts: the project's, with the npm `solc` package's
// soljson.js as the compiler), as docs/hardhat.md says a user offline does.
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Options, ResultPromise } from "execa";
import { listProcesses } from "../../harness/process/index.ts";
import type { UserNode } from "./user-node.ts";
import { folderFiles, writeFolderFiles } from "./folder-files.ts";

/** What the consumer test (scripts/consumer/test-package.ts) hands over. */
export interface HardhatConsumer {
  /** The temp folder holding everything the consumer test makes. */
  work: string;
  /** The consumer's TMPDIR (inProject sets it): the stacks' temp state dirs go there. */
  tmp: string;
  /** The packed package. */
  tarball: string;
  readme: string;
  step: <T>(name: string, run: () => Promise<T>) => Promise<T>;
  /** Runs a command (cwd may be given); detached runs are stopped if a step fails. */
  inProject: (file: string, args: string[], options?: Options) => ResultPromise;
  /** This repository's installed version of a package. */
  version: (pkg: string) => Promise<string>;
  /** The user's Node: how the README says to install on it; every command runs in its environment. */
  user: UserNode;
}

/** The docs' offline config (docs/hardhat.md), the one the runs here take. */
const OFFLINE_CONFIG = "offline.hardhat.config.ts";
/** The README's Hardhat files are named under this folder (```ts hardhat-project/hardhat.config.ts). */
const FOLDER = "hardhat-project";
// Not in this repository's node_modules (the plugin needs neither): the releases this was tested with.
const HARDHAT_VIEM = "3.0.9";
const NODE_TEST_RUNNER = "3.1.0";

/**
 * The README's Hardhat project, written, installed and type-checked: no stack, no step of its own, so
 * the consumer test runs it in the background beside its other steps (the install is mostly npm's wait).
 */
export async function setupHardhat({ work, tarball, readme, inProject, version, user }: Omit<HardhatConsumer, "tmp" | "step">): Promise<void> {
  const dir = path.join(work, FOLDER);
  const inDir = (file: string, args: string[], options: Options = {}) => inProject(file, args, { cwd: dir, env: user.env, extendEnv: false, ...options });
  const files = folderFiles(readme, FOLDER);
  for (const name of ["hardhat.config.ts", OFFLINE_CONFIG, "test/devstack.ts"]) if (!files.has(name)) throw new Error(`README.md has no code block for ${FOLDER}/${name}`);
  if (!readme.includes(`npx hardhat test --config ${OFFLINE_CONFIG}`)) throw new Error(`the docs do not give the command run here: npx hardhat test --config ${OFFLINE_CONFIG}`);
  await mkdir(dir);
  await writeFile(path.join(dir, "package.json"), `${JSON.stringify({ name: FOLDER, private: true, type: "module" }, null, 2)}\n`);
  await writeFolderFiles(dir, files);
  const packages = [
    tarball,
    `hardhat@${await version("hardhat")}`,
    `@nomicfoundation/hardhat-viem@${HARDHAT_VIEM}`,
    `@nomicfoundation/hardhat-node-test-runner@${NODE_TEST_RUNNER}`,
    `viem@${await version("viem")}`,
    `@types/node@${await version("@types/node")}`,
    `typescript@${await version("typescript")}`,
    `solc@${await version("solc")}`,
  ];
  await user.install(dir, packages, ["esbuild"]); // Hardhat's
  // The README's files as a reader's strict TypeScript sees them: the plugin's types on the connection.
  // skipLibCheck as `tsc --init` writes it: the package's own declarations are checked without it in the
  // main consumer project (test-package.ts); here, the reader's files against them (issue 42, item 7).
  const tsconfig = { compilerOptions: { module: "nodenext", target: "es2022", strict: true, noEmit: true, skipLibCheck: true }, include: ["hardhat.config.ts", OFFLINE_CONFIG, "test"] };
  await writeFile(path.join(dir, "tsconfig.json"), `${JSON.stringify(tsconfig, null, 2)}\n`);
  await inDir("npx", ["tsc", "-p", "."]);
}

export async function hardhatConsumer({ work, tmp, step, inProject, user }: HardhatConsumer, setup: Promise<void>): Promise<void> {
  const dir = path.join(work, FOLDER);
  const inDir = (file: string, args: string[], options: Options = {}) => inProject(file, args, { cwd: dir, env: user.env, extendEnv: false, ...options });
  // Everything the project runs has its folder in its command line (anvil's --load-state included).
  const leftRunning = async () => (await listProcesses()).filter((p) => p.args.includes(dir)).map((p) => `${p.pid} ${p.args}`);
  const stateDirs = async () => (await readdir(tmp)).filter((name) => name.startsWith("queue-devstack-"));
  const before = new Set(await stateDirs());
  const stateDirsLeft = async () => (await stateDirs()).filter((name) => !before.has(name));
  const hardhatTest = ["hardhat", "test", "--config", OFFLINE_CONFIG];

  await step(`the README's Hardhat project in ${FOLDER}/, ${user.label}: npm install the tarball, hardhat, hardhat-viem, the node:test runner; tsc (in the background since the first install)`, () => setup);

  await step(`npx hardhat test ${user.label} (the README's Hardhat test, node:test runner): passes, no process and no temp folder left`, async () => {
    // Bounded: a plugin that held the process open would hang here (node:test under Hardhat ends its run only when nothing does).
    const run = await inDir("npx", hardhatTest, { reject: false, timeout: 180_000 });
    const all = String(run.all ?? "");
    // A run that found no test would pass too: the README's five tests must be the passes.
    if (run.exitCode !== 0 || !/\b5 passing\b/.test(all)) throw new Error(`npx hardhat test: exit ${run.exitCode}\n${all}`);
    const [left, dirs] = [await leftRunning(), await stateDirsLeft()];
    if (left.length > 0 || dirs.length > 0) throw new Error(`left behind: ${[...left, ...dirs].join("; ")}`);
  });

  await step("npx hardhat run of a script using the stack: it ends by itself, no process and no temp folder left", async () => {
    // Not a README file: a script's end is no test hook; the stack stops when the process runs out of work.
    await mkdir(path.join(dir, "scripts"));
    await writeFile(
      path.join(dir, "scripts", "show.ts"),
      ['import { network } from "hardhat";', 'const { viem, devstack } = await network.create("devstack");', "console.log(devstack.manifest.poolAddress, await (await viem.getPublicClient()).getBlockNumber());", ""].join("\n"),
    );
    const run = await inDir("npx", ["hardhat", "run", "scripts/show.ts", ...hardhatTest.slice(2)], { reject: false, timeout: 180_000 });
    if (run.exitCode !== 0 || !/^0x[0-9a-fA-F]{40} \d+n$/m.test(String(run.all ?? ""))) throw new Error(`npx hardhat run: exit ${run.exitCode}\n${String(run.all ?? "")}`);
    const [left, dirs] = [await leftRunning(), await stateDirsLeft()];
    if (left.length > 0 || dirs.length > 0) throw new Error(`left behind: ${[...left, ...dirs].join("; ")}`);
  });

  // Not a README file: a test that says where its stack is, then waits (a timer holds the process).
  const infoFile = path.join(dir, "hang.json");
  await mkdir(path.join(dir, "interrupt"));
  await writeFile(
    path.join(dir, "interrupt", "hang.ts"),
    [
      'import { writeFile } from "node:fs/promises";',
      'import { it } from "node:test";',
      'import { network } from "hardhat";',
      'const { devstack } = await network.create("devstack");',
      'it("holds the stack until interrupted", async () => {',
      `  await writeFile(${JSON.stringify(infoFile)}, JSON.stringify({ pid: devstack.chainPid, stateDir: devstack.stateDir }));`,
      "  await new Promise(() => setInterval(() => {}, 1000));",
      "});",
      "",
    ].join("\n"),
  );
  // Ctrl-C signals the whole foreground group; a signal to npx's PID alone (issue 40, item 9) reaches only
  // npm's sh -c, which keeps it from Hardhat: the plugin sees that sh wake, as the CLI does.
  for (const [how, interrupt] of [
    ["Ctrl-C", (pid: number) => process.kill(-pid, "SIGINT")],
    ["SIGINT to npx's PID", (pid: number) => process.kill(pid, "SIGINT")],
  ] as const) {
    await step(`npx hardhat test of a test holding the stack, then ${how}: no process and no temp folder left within 10 s`, async () => {
      await rm(infoFile, { force: true });
      const run = inDir("npx", [...hardhatTest.slice(0, 2), "nodejs", "interrupt/hang.ts", ...hardhatTest.slice(2)], { detached: true, reject: false, all: false, timeout: 180_000 });
      let ended = false;
      void run.then(() => (ended = true));
      const deadline = Date.now() + 60_000;
      while ((await readFile(infoFile, "utf8").catch(() => undefined)) === undefined) {
        if (Date.now() > deadline || ended) throw new Error(`the test never started its stack${ended ? `: ${String((await run).stderr)}` : ""}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      interrupt(run.pid as number);
      const signalled = Date.now();
      const result = await run;
      if (result.exitCode === 0) throw new Error("an interrupted run passed");
      if (Date.now() - signalled > 10_000) throw new Error(`npx ended ${Date.now() - signalled} ms after the ${how}`);
      const [left, dirs] = [await leftRunning(), await stateDirsLeft()];
      if (left.length > 0 || dirs.length > 0) throw new Error(`left behind: ${[...left, ...dirs].join("; ")}`);
    });
  }
}
