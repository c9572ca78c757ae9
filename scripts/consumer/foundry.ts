// The consumer test's Foundry part (issue 20): the README's Foundry project, made from the packed tarball
// and the @foundry-rs/forge npm package in a folder of its own, run through `queue-devstack exec` as the
// README says: its tests pass, a failing test's exit code comes through, a Ctrl-C during a test leaves
// no process; and the npm wrapper's known defect the README warns of is still there.
//
// Offline, as the README says (issue 30, item 9): forge downloads a native solc on first use, and this
// machine has no internet, so FOUNDRY_SOLC points forge at the package's `queue-devstack-solc` (the npm
// `solc` package, installed beside it, behind a native solc's command line). The project is installed
// and run from the machine's older Node if it has one, as the README says (scripts/consumer/user-node.ts).
// forge also writes its caches to ~/.foundry: its runs here get a HOME of their own, removed with the rest.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Options } from "execa";
import { listProcesses } from "../../harness/process/index.ts";
import type { HardhatConsumer } from "./hardhat.ts";
import { folderFiles, writeFolderFiles } from "./folder-files.ts";

/** What the consumer test (scripts/consumer/test-package.ts) hands over: the same as to the Hardhat part. */
export type FoundryConsumer = HardhatConsumer;

/** The README's Foundry files are named under this folder (```toml foundry-project/foundry.toml). */
const FOLDER = "foundry-project";
/** The package's solc for forge offline, as the README names it (from the project's folder). */
const SOLC = "node_modules/.bin/queue-devstack-solc";
/** The README's command with forge's own binary from npm's platform package (the wrapper loses forge's exit code). */
const README_COMMAND = "npx queue-devstack exec -- node_modules/@foundry-rs/forge-linux-amd64/bin/forge test --fork-url devstack";
/** The README's offline form of it. */
const README_OFFLINE = `FOUNDRY_SOLC=${SOLC} ${README_COMMAND}`;
/** This machine's platform package (the README names the others). */
const PLATFORM = `${process.platform}-${process.arch === "x64" ? "amd64" : process.arch}`;
const FORGE = `node_modules/@foundry-rs/forge-${PLATFORM}/bin/forge`;
const FORGE_TEST = [FORGE, "test", "--fork-url", "devstack"];

/** forge writes its caches to ~/.foundry: its runs here get a HOME of their own, in the consumer's folder. */
const foundryHome = (work: string) => path.join(work, "foundry-home");

/** Not README files: a test that fails, and one that says where its stack is (forge may write in its project only) and waits. */
const CHECKS = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

interface Vm {
    function envString(string calldata name) external view returns (string memory);
    function writeFile(string calldata path, string calldata data) external;
    function sleep(uint256 milliseconds) external;
}

contract FailsTest {
    function test_fails() public pure {
        require(false, "fails on purpose");
    }
}

contract HangTest {
    Vm constant vm = Vm(address(uint160(uint256(keccak256("hevm cheat code")))));

    function test_holdsTheStack() public {
        vm.writeFile("started", vm.envString("QUEUE_DEVSTACK_STATE_DIR"));
        vm.sleep(600_000);
    }
}
`;

/** The README's Foundry project and its checks' project, written and installed (no stack): the consumer test runs it in the background. */
export async function setupFoundry({ work, tarball, readme, inProject, version, user }: Omit<FoundryConsumer, "tmp" | "step">): Promise<void> {
  const dir = path.join(work, FOLDER);
  const checks = path.join(dir, "checks");
  const [forge, solc] = [`@foundry-rs/forge@${await version("@foundry-rs/forge")}`, `solc@${await version("solc")}`];
  const files = folderFiles(readme, FOLDER);
  for (const name of ["foundry.toml", "test/DevStackPool.t.sol"]) if (!files.has(name)) throw new Error(`README.md has no code block for ${FOLDER}/${name}`);
  for (const command of [README_COMMAND, README_OFFLINE, `forge-${PLATFORM}`]) if (!readme.includes(command)) throw new Error(`the docs (README.md, docs/*.md) do not give the command run here: ${command}`);
  await mkdir(dir);
  await inProject("npm", ["init", "-y"], { cwd: dir, env: user.env, extendEnv: false });
  await user.install(dir, [tarball, forge, solc], ["@foundry-rs/forge"]);
  await writeFolderFiles(dir, files);
  await mkdir(foundryHome(work));
  // The checks' project: the README's foundry.toml, and forge may write in it (the hang test's "started").
  await mkdir(path.join(checks, "test"), { recursive: true });
  const config = (files.get("foundry.toml") as string).replace("[profile.default]\n", '[profile.default]\nfs_permissions = [{ access = "write", path = "./" }]\n');
  if (!config.includes("fs_permissions")) throw new Error("the README's foundry.toml has no [profile.default]");
  await writeFile(path.join(checks, "foundry.toml"), config);
  await writeFile(path.join(checks, "test", "Checks.t.sol"), CHECKS);
}

export async function foundryConsumer({ work, tmp, step, inProject, version, user }: FoundryConsumer, setup: Promise<void>): Promise<void> {
  const dir = path.join(work, FOLDER);
  // In the project (npx finds the package there), a Foundry project of its own: the README's is not compiled with it.
  const checks = path.join(dir, "checks");
  // The README's relative FOUNDRY_SOLC in its project; the checks' project, a folder down, names the same file.
  const env = (cwd: string) => ({ ...user.env, FOUNDRY_SOLC: cwd === dir ? SOLC : path.join(dir, SOLC), HOME: foundryHome(work) });
  const exec = (cwd: string, forgeArgs: string[], options: Options = {}) =>
    inProject("npx", ["queue-devstack", "exec", "--", ...forgeArgs], { cwd, env: env(cwd), extendEnv: false, reject: false, ...options });

  /** Ours: whatever runs with the consumer's folder (a project, its TMPDIR, a stack's state dir) in its args. */
  async function noneLeft(): Promise<void> {
    const left = (await listProcesses()).filter((p) => p.pid !== process.pid && p.args.includes(work));
    if (left.length === 0) return;
    // The command runs in exec's own process group, out of reach of the consumer test's clean-up: stop it here.
    for (const { pid } of left) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
    throw new Error(`left running: ${left.map((p) => `${p.pid} ${p.args}`).join("; ")}`);
  }

  const [forge, solc] = [`@foundry-rs/forge@${await version("@foundry-rs/forge")}`, `solc@${await version("solc")}`];
  await step(`the README's Foundry project ${user.label}: npm init -y, npm install the tarball, ${forge} and ${solc} (in the background since the first install)`, () => setup);

  await step(`FOUNDRY_SOLC=${SOLC} npx queue-devstack exec -- ${FORGE_TEST.join(" ")} (offline): the README's tests pass, no process left`, async () => {
    const run = await exec(dir, FORGE_TEST);
    await noneLeft();
    // A run of no test would exit 0 too: the README's three must be the passes.
    if (run.exitCode !== 0 || !/3 tests passed, 0 failed/.test(String(run.all))) throw new Error(`forge test through exec: exit ${run.exitCode}\n${String(run.all)}`);
  });

  await step("a failing forge test through exec: exec exits with forge's exit code (1)", async () => {
    const run = await exec(checks, [path.join(dir, FORGE), "test", "--fork-url", "devstack", "--match-contract", "FailsTest"]);
    await noneLeft();
    if (run.exitCode !== 1 || !/FAIL: fails on purpose/.test(String(run.all))) throw new Error(`expected exit 1 and the failure; got exit ${run.exitCode}:\n${String(run.all)}`);
  });

  await step("npx forge (the npm wrapper) still exits 0 on a failing test, as the README warns (foundry-rs/foundry#14781)", async () => {
    // When this fails, @foundry-rs/forge passes forge's exit code through: the README can say `npx forge`.
    const run = await inProject("npx", ["forge", "test", "--match-contract", "FailsTest"], { cwd: checks, env: env(checks), extendEnv: false, reject: false });
    if (!/FAIL: fails on purpose/.test(String(run.all))) throw new Error(`the failing test did not run:\n${String(run.all)}`);
    if (run.exitCode !== 0) throw new Error(`npx forge exited ${run.exitCode} on a failing test: the npm wrapper is fixed; update the README's Foundry section (and this step)`);
  });

  await step("exec -- forge test of a test holding the stack, then Ctrl-C: no process left", async () => {
    // Ctrl-C in a terminal signals the whole foreground process group: the run is a group of its own.
    const run = exec(checks, [path.join(dir, FORGE), "test", "--fork-url", "devstack", "--match-contract", "HangTest"], { detached: true, all: false });
    let ended = false;
    void run.finally(() => (ended = true));
    const started = path.join(checks, "started");
    const deadline = Date.now() + 120_000;
    for (;;) {
      const stateDir = await readFile(started, "utf8").catch(() => undefined);
      if (stateDir !== undefined) {
        if (stateDir.startsWith(tmp)) break;
        await noneLeft().catch(() => {});
        throw new Error(`the stack's state dir ${stateDir} is not in the consumer's TMPDIR: this step could not see it left`);
      }
      if (ended || Date.now() > deadline) {
        await noneLeft().catch(() => {});
        throw new Error(ended ? `exec ended before its forge test started:\n${String((await run).stderr)}` : "the forge test never started");
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    process.kill(-(run.pid as number), "SIGINT");
    // The test sleeps for 10 minutes: a run still going 2 minutes after the Ctrl-C ignored it (a guard
    // against hanging here, not a timing: stopping takes seconds).
    let stuck = false;
    const guard = setTimeout(() => ((stuck = true), void noneLeft().catch(() => {})), 120_000);
    const result = await run.finally(() => clearTimeout(guard));
    if (stuck) throw new Error("exec was still running 2 minutes after the Ctrl-C: its processes were killed");
    await noneLeft();
    if (result.exitCode === 0) throw new Error("exec exited 0 after a Ctrl-C during its command");
  });
}
