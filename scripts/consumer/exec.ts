// The consumer test's `exec` part (issue 20): in the consumer project made from the tarball, the README's
// Python suite through `npx queue-devstack exec -- python3 -m unittest`, the README's node:test pattern
// with `node --test` as the README says to run it on the user's Node (`npx node --test` from an older
// system Node: issue 30, item 8), and a Ctrl-C of a node:test file holding its stack, and a Ctrl-C of
// `npx queue-devstack exec -- <long command>` leaving no process.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Options, ResultPromise } from "execa";
import { isAlive, listProcesses } from "../../harness/process/index.ts";
import type { UserNode } from "./user-node.ts";

/** What the consumer test (scripts/consumer/test-package.ts) hands over. */
export interface ExecConsumer {
  /** The consumer project, the tarball installed and the README's named files written in it. */
  project: string;
  /** The temp folder holding everything the consumer test makes. */
  work: string;
  files: Map<string, string>;
  step: <T>(name: string, run: () => Promise<T>) => Promise<T>;
  /** Runs a command in the project; detached runs are stopped if a step fails. */
  inProject: (file: string, args: string[], options?: Options) => ResultPromise;
  /** The user's Node: how the README says to run `node --test` on it. */
  user: UserNode;
}

/** Waits (up to 5 s: SIGTERM takes a moment) until none of these processes is left; throws naming those left. */
async function noneLeft(pids: number[], marks: string[]): Promise<void> {
  let left: Awaited<ReturnType<typeof listProcesses>> = [];
  for (let waited = 0; waited <= 5_000; waited += 100) {
    left = (await listProcesses()).filter((p) => p.pid !== process.pid && (pids.includes(p.pid) || marks.some((mark) => p.args.includes(mark))));
    if (left.length === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`left running: ${left.map((p) => `${p.pid} ${p.args}`).join("; ")}`);
}

export async function execConsumer({ project, work, files, step, inProject, user }: ExecConsumer): Promise<void> {
  const node = (args: string[], options: Options = {}) => {
    const [file, fileArgs] = user.node(args);
    return inProject(file, fileArgs, { env: user.env, extendEnv: false, ...options });
  };
  // Ours: what has the project or its TMPDIR (the stacks' state dirs) in its command line. Not all of
  // work/: the Hardhat and Foundry projects install there meanwhile, in the background.
  const ours = [project, path.join(work, "tmp")];
  for (const name of ["test_queue_devstack.py", "node-test.mjs"]) {
    if (!files.has(name)) throw new Error(`README.md has no code block for ${name}`);
  }

  await step("npx queue-devstack exec -- python3 -m unittest (the README's Python suite, standard library only)", async () => {
    const run = await inProject("npx", ["queue-devstack", "exec", "--", "python3", "-m", "unittest", "-v"], { reject: false });
    const all = String(run.all ?? "");
    // unittest exits 0 having found nothing ("NO TESTS RAN" is 5 since 3.12, not before): count them.
    if (run.exitCode !== 0 || !/^Ran 4 tests in /m.test(all)) throw new Error(`the Python suite through exec: exit ${run.exitCode}\n${all}`);
    await noneLeft([], ours);
  });

  await step(`${user.node(["--test", "node-test.mjs"]).flat().join(" ")} ${user.label} (the README's node:test pattern: before, beforeEach reset, after stop)`, async () => {
    const run = await node(["--test", "node-test.mjs"], { reject: false });
    const all = String(run.all ?? "");
    if (run.exitCode !== 0 || !/^# pass 3$/m.test(all)) throw new Error(`node --test: exit ${run.exitCode}\n${all}`);
    await noneLeft([], ours);
  });

  await step(`${user.node(["--test"]).flat().join(" ")} of a test holding its stack, then Ctrl-C: no process left`, async () => {
    // Not a README file: a node:test file that starts a stack as the README's pattern does, says where its
    // anvil is, and waits; Ctrl-C goes to the terminal's foreground group (node --test and its file's process).
    const said = path.join(project, "node-test-hold.json");
    await writeFile(
      path.join(project, "node-test-hold.mjs"),
      [
        `import { writeFile } from "node:fs/promises";`,
        `import { test } from "node:test";`,
        `import { startDevStack } from "queue-devstack";`,
        `test("holds its stack", async () => {`,
        `  const stack = await startDevStack();`,
        `  await writeFile(${JSON.stringify(said)}, JSON.stringify({ anvil: stack.chainPid, stateDir: stack.stateDir }));`,
        `  await new Promise(() => {});`,
        `});`,
      ].join("\n"),
    );
    const run = node(["--test", "node-test-hold.mjs"], { detached: true, reject: false, all: false });
    const deadline = Date.now() + 60_000;
    let held: { anvil: number; stateDir: string } | undefined;
    while (held === undefined) {
      held = await readFile(said, "utf8").then((text) => JSON.parse(text) as typeof held).catch(() => undefined); // absent, or not all written yet
      if (held === undefined && Date.now() > deadline) throw new Error("the test never started its stack");
      if (held === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    if (!isAlive(held.anvil)) throw new Error("the test's anvil is not running");
    process.kill(-(run.pid as number), "SIGINT");
    await run;
    await noneLeft([held.anvil], ours);
  });

  await step("npx queue-devstack exec -- <a command that waits>, then Ctrl-C: no process left (the command's background job neither)", async () => {
    // sh writes its PID and the stack's, then waits on a background sleep, which a non-interactive shell
    // starts ignoring SIGINT: exec's SIGTERM to the command's group when it ends is what stops it.
    const said = path.join(project, "exec-interrupt.json");
    const script = `sleep 600 & printf '{"sh":%s,"sleep":%s,"stack":%s}' $$ $! "$(cat "$QUEUE_DEVSTACK_STACK_INFO")" > exec-interrupt.json; wait`;
    const run = inProject("npx", ["queue-devstack", "exec", "--", "sh", "-c", script], { detached: true, reject: false, all: false });
    const deadline = Date.now() + 60_000;
    let held: { sh: number; sleep: number; stack: { stateDir: string; processes: { anvil: { pid: number } } } } | undefined;
    while (held === undefined) {
      held = await readFile(said, "utf8").then((text) => JSON.parse(text) as typeof held).catch(() => undefined); // absent, or not all written yet
      if (held === undefined && Date.now() > deadline) throw new Error("the command never started");
      if (held === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    if (!isAlive(held.sleep)) throw new Error("the command's background job is not running");
    process.kill(-(run.pid as number), "SIGINT"); // Ctrl-C: the terminal's foreground group (npx and exec)
    await run;
    await noneLeft([held.sh, held.sleep, held.stack.processes.anvil.pid], [held.stack.stateDir, ...ours]);
  });
}
