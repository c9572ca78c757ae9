import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { execa, type ResultPromise } from "execa";
import { privateKeyToAccount } from "viem/accounts";
import { describe, it, type TestContext } from "vitest";
import { ENV_PREFIX, runCommand, shellCommandLine } from "../harness/exec/index.ts";
import { UNPRINTABLE } from "../src/printable.ts";
import { STACK_URLS, StackInfo } from "../harness/stack-info/index.ts";
import { portOpen } from "./support/ports.ts";
import { alive, anvilsWith, endLaunches, gone } from "./support/processes.ts";
import { withTempDirs } from "./support/temp-dirs.ts";
import { builtCli, SOURCE_CLI } from "./support/cli.ts";

const tempDir = withTempDirs();
const CLI = [...builtCli(), "exec"];
/** The CLI without a sub-command. */
const NOT_EXEC = builtCli();

/** A Node script as the command (ESM, so it may await at the top). */
const node = (script: string) => [process.execPath, "--input-type=module", "-e", script];

/** A command that says who it is (its PID, its stack's anvil) in one line, then waits to be stopped. */
const SAY_AND_WAIT_SCRIPT = `
  const info = JSON.parse((await import("node:fs")).readFileSync(process.env.QUEUE_DEVSTACK_STACK_INFO, "utf8"));
  console.log(JSON.stringify({ pid: process.pid, anvil: info.processes.anvil.pid, rpcUrl: info.rpcUrl, queueUrl: info.queueUrl }));
  setInterval(() => {}, 1000);
`;
const SAY_AND_WAIT = node(SAY_AND_WAIT_SCRIPT);

/**
 * One test's launches, tracked for its clean-up when it ends (pass or fail): the wrapper first (it stops
 * its stack and its command), then anything of a failed test, by PID. Per test, as the tests run side by
 * side: one's clean-up must not end another's launches.
 */
function launches(onTestFinished: TestContext["onTestFinished"]) {
  const running: ResultPromise[] = [];
  const pids: number[] = [];
  onTestFinished(() => endLaunches(running, "SIGTERM", pids));
  const track = <T extends ResultPromise>(child: T): T => (running.push(child), child);
  return {
    track,
    pids,
    /** `queue-devstack exec [options] -- <command>` through the CLI, stdout and stderr collected. */
    exec: (options: string[], command: string[], env: Record<string, string> = {}) => track(execa(process.execPath, [...CLI, ...options, "--", ...command], { reject: false, env })),
    /** The first line the command prints, parsed; its processes are tracked for the clean-up. */
    async firstLine(child: ResultPromise): Promise<{ pid: number; anvil: number; rpcUrl: string; queueUrl: string }> {
      let out = "";
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout?.on("data", (d: Buffer) => ((out += d.toString()), out.includes("\n") && resolve(out.split("\n")[0] as string)));
        void child.then((r) => reject(new Error(`exec ended (${r.exitCode}) before its command spoke:\n${String(r.stderr)}`)));
      });
      const said = JSON.parse(line) as { pid: number; anvil: number; rpcUrl: string; queueUrl: string };
      pids.push(said.pid, said.anvil);
      return said;
    },
  };
}

/** The lines exec marks its runs with (--runs), on stderr. */
const marks = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("---- "));

// The tests run side by side (issue 42, item 7): each launch has free ports and a state dir of its own,
// each test its own clean-up (launches) and its context's expect.
describe.concurrent("queue-devstack exec", () => {
  it("gives the command the stack in its environment: the values are the stack's, read from the chain and the queue", async ({ expect, onTestFinished }) => {
    const { exec } = launches(onTestFinished);
    const result = await exec([], node(`
      import { readFileSync } from "node:fs";
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("QUEUE_DEVSTACK_")));
      const rpc = async (method, params) => (await (await fetch(env.QUEUE_DEVSTACK_RPC_URL, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) })).json()).result;
      console.log(JSON.stringify({
        env,
        chainId: await rpc("eth_chainId", []),
        poolCode: await rpc("eth_getCode", [env.QUEUE_DEVSTACK_POOL_ADDRESS, "latest"]),
        deploymentBlock: await rpc("eth_getBlockByNumber", ["0x" + Number(env.QUEUE_DEVSTACK_DEPLOYMENT_BLOCK).toString(16), false]),
        config: await (await fetch(env.QUEUE_DEVSTACK_QUEUE_URL + "/api/queue/config")).text(),
        manifest: readFileSync(env.QUEUE_DEVSTACK_MANIFEST, "utf8"),
        stackInfo: JSON.parse(readFileSync(env.QUEUE_DEVSTACK_STACK_INFO, "utf8")),
      }));
    `));
    expect(result.exitCode, result.stderr).toBe(0);
    const seen = JSON.parse(result.stdout) as { env: Record<string, string>; chainId: string; poolCode: string; deploymentBlock: { hash: string }; config: string; manifest: string; stackInfo: unknown };
    const { env } = seen;
    const info = StackInfo.parse(seen.stackInfo);
    const manifest = JSON.parse(seen.manifest) as { chainId: number; poolAddress: string; deploymentBlockHash: string; assets: Array<{ symbol: string; address: string }>; queue: { proof: { verifier: { address: string } } } };
    expect(Object.keys(env).every((name) => name.startsWith(ENV_PREFIX))).toBe(true);
    expect(Number(seen.chainId)).toBe(11155111);
    expect(env.QUEUE_DEVSTACK_CHAIN_ID).toBe("11155111");
    expect(seen.config).toBe(seen.manifest); // the queue serves the manifest the variable names
    expect(env.QUEUE_DEVSTACK_POOL_ADDRESS).toBe(manifest.poolAddress);
    expect(seen.poolCode.length).toBeGreaterThan(2);
    expect(env.QUEUE_DEVSTACK_DEPLOYMENT_BLOCK_HASH).toBe(seen.deploymentBlock.hash);
    expect(env.QUEUE_DEVSTACK_DEPLOYMENT_BLOCK_HASH).toBe(manifest.deploymentBlockHash);
    expect(env.QUEUE_DEVSTACK_VERIFIER_ADDRESS).toBe(manifest.queue.proof.verifier.address);
    for (const asset of manifest.assets) expect(env[`QUEUE_DEVSTACK_ASSET_${asset.symbol.toUpperCase()}_ADDRESS`]).toBe(asset.address);
    // Every URL the summary prints, as stack.json names it (issue 30, item 5); no other URL variable.
    expect(Object.keys(env).filter((name) => name.endsWith("_URL")).sort()).toEqual(STACK_URLS.map((u) => `${ENV_PREFIX}${u.env}`).sort());
    for (const { key, env: name } of STACK_URLS) expect(env[`${ENV_PREFIX}${name}`], name).toBe(info[key]);
    expect(env).toMatchObject({
      QUEUE_DEVSTACK_RPC_URL: info.rpcUrl,
      QUEUE_DEVSTACK_QUEUE_URL: info.queueUrl,
      QUEUE_DEVSTACK_CONFIG_URL: `${info.queueUrl}/api/queue/config`,
      QUEUE_DEVSTACK_DOCS_URL: `${info.queueUrl}/api/queue/docs`,
      QUEUE_DEVSTACK_DASHBOARD_URL: `${info.queueUrl}/api/dev/dashboard`,
      QUEUE_DEVSTACK_MODE: "local",
      QUEUE_DEVSTACK_PROOFS: info.proofs,
      QUEUE_DEVSTACK_RELAYER_ADDRESS: info.relayer.address,
      QUEUE_DEVSTACK_MANIFEST: info.manifestPath,
      QUEUE_DEVSTACK_STATE_DIR: info.stateDir,
      QUEUE_DEVSTACK_STACK_INFO: path.join(info.stateDir, "stack.json"),
      QUEUE_DEVSTACK_ACCOUNT_COUNT: String(info.devAccounts.length),
      QUEUE_DEVSTACK_RUN: "1",
      QUEUE_DEVSTACK_RUNS: "1",
    });
    info.devAccounts.forEach((account, i) => {
      expect(env[`QUEUE_DEVSTACK_ACCOUNT_${i}_ADDRESS`]).toBe(account.address);
      expect(privateKeyToAccount(env[`QUEUE_DEVSTACK_ACCOUNT_${i}_PRIVATE_KEY`] as `0x${string}`).address).toBe(account.address);
    });
    // Free ports and a temp state dir by default, gone with the stack.
    expect(info.rpcUrl).not.toMatch(/:8545$/);
    await expect(readFile(info.manifestPath)).rejects.toThrow(/ENOENT/);
    expect(await gone(info.processes.anvil.pid)).toBe(true);
  });

  it("exits with the command's exit code, or 128+n when signal n killed it", async ({ expect, onTestFinished }) => {
    const { exec } = launches(onTestFinished);
    // Through the CLI once each way (an exit code, a signal); the other codes where exec gets them, in
    // process (runCommand: the CLI exits with what it says), each without a stack launch of its own.
    const ended = (command: string[]) => runCommand(command, {}).done.then((r) => r.exitCode);
    // The two launches side by side (each its own stack).
    const [exited, killed] = await Promise.all([exec([], ["sh", "-c", "exit 3"]), exec([], node(`process.kill(process.pid, "SIGUSR2")`))]);
    expect(exited.exitCode).toBe(3);
    for (const code of [0, 255]) expect(await ended(["sh", "-c", `exit ${code}`])).toBe(code);
    expect(killed.exitCode).toBe(128 + 12);
    expect(await ended(["sh", "-c", "kill -KILL $$"])).toBe(128 + 9);
  });

  for (const [signal, number] of [["SIGINT", 2], ["SIGTERM", 15]] as const) {
    it(`${signal} to exec goes to the command (once); the stack stops; exit 128+${number}`, async ({ expect, onTestFinished }) => {
      const { exec, firstLine } = launches(onTestFinished);
      // The command says which signal it got, then lets it kill it.
      const run = exec([], node(`
        for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.once(signal, () => { console.log("got " + signal); process.kill(process.pid, signal); });
        ${SAY_AND_WAIT_SCRIPT}
      `));
      const said = await firstLine(run);
      expect(alive(said.anvil)).toBe(true);
      run.kill(signal);
      const result = await run;
      expect(result.exitCode).toBe(128 + number);
      expect(result.stdout.split("\n").slice(1)).toEqual([`got ${signal}`]);
      expect(await gone(said.pid)).toBe(true);
      expect(await gone(said.anvil)).toBe(true);
      expect(await portOpen(said.rpcUrl)).toBe(false);
      expect(await portOpen(said.queueUrl)).toBe(false);
    });
  }

  it("a command that handles the signal decides the exit code", async ({ expect, onTestFinished }) => {
    const { exec, firstLine } = launches(onTestFinished);
    const run = exec([], node(`
      process.on("SIGINT", () => { console.log("stopping cleanly"); process.exit(0); });
      ${SAY_AND_WAIT_SCRIPT}
    `));
    const said = await firstLine(run);
    run.kill("SIGINT");
    const result = await run;
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain("stopping cleanly");
    expect(await gone(said.anvil)).toBe(true);
  });

  it("what the command left running in its process group gets SIGTERM when it ends", async ({ expect, onTestFinished }) => {
    const { exec, pids } = launches(onTestFinished);
    const result = await exec([], ["sh", "-c", "sleep 600 >/dev/null 2>&1 & echo $!"]);
    expect(result.exitCode).toBe(0);
    const sleep = Number(result.stdout);
    pids.push(sleep);
    expect(await gone(sleep)).toBe(true);
  });

  it("SIGKILLed, exec leaves nothing: its command and its anvil die with it", async ({ expect, onTestFinished }) => {
    const { exec, firstLine } = launches(onTestFinished);
    const stateDir = await tempDir("exec-killed-"); // a temp state dir of its own would be left behind
    const run = exec(["--state-dir", stateDir], SAY_AND_WAIT);
    const said = await firstLine(run);
    run.kill("SIGKILL");
    await run;
    expect(await gone(said.pid)).toBe(true);
    expect(await gone(said.anvil)).toBe(true);
    expect(await anvilsWith(stateDir)).toEqual([]);
    expect(await portOpen(said.rpcUrl)).toBe(false);
  });

  it("a signal during the stack's start-up: the start undone (its temp state dir too), nothing run, exit 128+n", async ({ expect, onTestFinished }) => {
    const { track, pids } = launches(onTestFinished);
    const parent = await tempDir("exec-early-");
    const marker = path.join(parent, "ran");
    // From source: the installed bin keeps Node's compile cache in TMPDIR (a cache, not the start's), and
    // this test counts what the start left there.
    const run = execa(process.execPath, [...SOURCE_CLI, "exec", "--", "touch", marker], { reject: false, env: { TMPDIR: parent } });
    track(run);
    await new Promise<void>((resolve) => {
      let stderr = "";
      run.stderr?.on("data", (d: Buffer) => ((stderr += d.toString()), stderr.includes("start anvil") && resolve()));
    });
    const [anvil] = await anvilsWith(parent);
    expect(anvil).toBeGreaterThan(0);
    pids.push(anvil as number);
    run.kill("SIGTERM");
    const result = await run;
    expect(result.exitCode).toBe(128 + 15);
    await expect(readFile(marker)).rejects.toThrow(/ENOENT/);
    expect(await gone(anvil as number)).toBe(true);
    expect(await readdir(parent)).toEqual([]);
  });

  it("a stack that fails to start runs nothing: exit 1 and the CLI's one-line reason", async ({ expect, onTestFinished }) => {
    const { exec } = launches(onTestFinished);
    const stateDir = await tempDir("exec-fork-");
    const marker = path.join(stateDir, "ran");
    const result = await exec(["--state-dir", stateDir, "--fork-url", "http://u:topsecret@127.0.0.1:9"], ["touch", marker]);
    expect(result.exitCode).toBe(1);
    const reason = result.stderr.split("\n").filter((line) => line.startsWith("queue-devstack"));
    expect(reason).toHaveLength(1);
    expect(reason[0]).toMatch(/^queue-devstack: ForkUpstreamError: /);
    expect(result.stderr).not.toContain("topsecret");
    await expect(readFile(marker)).rejects.toThrow(/ENOENT/);
    expect(await anvilsWith(stateDir)).toEqual([]);
  });

  it("a command not found is 127 (126 not executable), before any stack starts; a mistake in the call is 2", async ({ expect, onTestFinished }) => {
    const { exec } = launches(onTestFinished);
    const mistakes = [
      // One message whatever is wrong with the number (issue 30, item 11).
      [[...CLI, "--runs", "0", "--", "true"], 'queue-devstack: --runs must be an integer of at least 1, got "0"'],
      [[...CLI, "--runs", "abc", "--", "true"], 'queue-devstack: --runs must be an integer of at least 1, got "abc"'],
      // A negative number is the option's value, not another option (issue 40, item 10: it said "needs a value").
      [[...CLI, "--runs", "-1", "--", "true"], 'queue-devstack: --runs must be an integer of at least 1, got "-1"'],
      [[...CLI, "--json", "--", "true"], "queue-devstack: --json is not an exec option: the command gets the stack in its environment"],
      [[...NOT_EXEC, "--runs", "2"], "queue-devstack: --runs is an exec option: queue-devstack exec --runs <n> -- <command>"],
    ] as const;
    // Every call side by side: each ends before a stack starts.
    const call = (args: readonly string[]) => execa(process.execPath, args, { reject: false });
    const [missing, notExecutable, noCommand, mistaken, help] = await Promise.all([
      exec([], ["queue-devstack-no-such-command", "x"]),
      exec([], ["./package.json"]),
      Promise.all([[...CLI], [...CLI, "--"], [...CLI, "--chain-port", "0"]].map(call)),
      Promise.all(mistakes.map(([args]) => call(args))),
      execa(process.execPath, [...NOT_EXEC, "--help"]),
    ]);
    expect(missing.exitCode).toBe(127);
    expect(missing.stderr).toBe("queue-devstack exec: queue-devstack-no-such-command: command not found");
    expect(notExecutable.exitCode).toBe(126);
    expect(notExecutable.stderr).toBe("queue-devstack exec: ./package.json: permission denied");
    for (const bad of noCommand) {
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr).toContain("queue-devstack: exec needs a command after --");
    }
    mistakes.forEach(([args, says], i) => {
      const bad = mistaken[i];
      expect(bad?.exitCode, args.join(" ")).toBe(2);
      expect(bad?.stderr).toBe(`${says}\nRun with --help for the options.`);
    });
    expect(help.stdout).toContain("queue-devstack exec [options] [--runs <n>] -- <command> [args…]");
  });

  it("the ready line shows the command quoted as a shell would read it back (issue 30, item 11)", async ({ expect, onTestFinished }) => {
    const { exec } = launches(onTestFinished);
    const script = `console.log(process.argv.slice(1).length)`;
    const result = await exec([], [process.execPath, "-e", script, "it's", "a b", "$HOME", ""]);
    expect(result.exitCode, result.stderr).toBe(0);
    const ready = result.stderr.split("\n").find((line) => line.startsWith("queue-devstack exec: stack ready")) as string;
    expect(ready).toMatch(/; running (.*)$/);
    expect(ready.endsWith(`; running ${process.execPath} -e 'console.log(process.argv.slice(1).length)' 'it'\\''s' 'a b' '$HOME' ''`)).toBe(true);
    // One run (no --runs): no run marks (see --runs below).
    expect(marks(result.stderr)).toEqual([]);
  });

  it("--runs n: each run gets the stack as it started (a reset, not a restart); the first failing run ends it", async ({ expect, onTestFinished }) => {
    const { exec } = launches(onTestFinished);
    // Each run mines 5 blocks, says what it found first, and the second run of the last call fails.
    const script = node(`
      const rpc = async (method, params) => (await (await fetch(process.env.QUEUE_DEVSTACK_RPC_URL, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) })).json()).result;
      const block = Number(await rpc("eth_blockNumber", []));
      await rpc("anvil_mine", ["0x5"]);
      console.log(JSON.stringify({ run: process.env.QUEUE_DEVSTACK_RUN, of: process.env.QUEUE_DEVSTACK_RUNS, block, anvil: JSON.parse((await import("node:fs")).readFileSync(process.env.QUEUE_DEVSTACK_STACK_INFO, "utf8")).processes.anvil.pid }));
      if (process.env.FAIL_RUN === process.env.QUEUE_DEVSTACK_RUN) process.exit(5);
    `);
    // The two calls side by side (each its own stack).
    const [result, failing] = await Promise.all([exec(["--runs", "3"], script), exec(["--runs", "3"], script, { FAIL_RUN: "2" })]);
    expect(result.exitCode, result.stderr).toBe(0);
    const runs = result.stdout.split("\n").map((line) => JSON.parse(line) as { run: string; of: string; block: number; anvil: number });
    expect(runs.map((r) => `${r.run}/${r.of}`)).toEqual(["1/3", "2/3", "3/3"]);
    expect(new Set(runs.map((r) => r.block)).size).toBe(1); // 5 blocks mined by each run, none seen by the next
    expect(new Set(runs.map((r) => r.anvil)).size).toBe(1); // the same anvil: reset, not restarted

    // Where each run begins and how the runs ended, on stderr (issue 30, item 11).
    expect(marks(result.stderr)).toEqual([
      "---- queue-devstack exec: run 1 of 3 ----",
      "---- queue-devstack exec: run 2 of 3 (the stack reset) ----",
      "---- queue-devstack exec: run 3 of 3 (the stack reset) ----",
      "---- queue-devstack exec: all 3 runs exited 0 ----",
    ]);

    expect(failing.exitCode).toBe(5);
    expect(failing.stdout.split("\n")).toHaveLength(2);
    expect(failing.stderr).toContain("queue-devstack exec: run 2 of 3 exited 5; no further run");
    expect(marks(failing.stderr)).toEqual(["---- queue-devstack exec: run 1 of 3 ----", "---- queue-devstack exec: run 2 of 3 (the stack reset) ----"]);
  });
});

describe("shellCommandLine (exec's ready line)", () => {
  it("is read back by bash into the same words, and prints no control or invisible character raw", async ({ expect }) => {
    const words = ["plain", "a b", "it's", "", "$HOME `x` \"q\" \\", "tab\there", "new\nline", "esc\u001b[2J", "c1\u009b", "rtl\u202eevil", "back\\slash'quote\u0007", "naïve ✓"];
    const line = shellCommandLine(words);
    expect(line).not.toMatch(new RegExp(UNPRINTABLE.source));
    expect(line.startsWith("plain 'a b' 'it'\\''s' '' ")).toBe(true);
    const { stdout } = await execa("bash", ["-c", `printf '%s\\0' ${line}`], { env: { LC_ALL: "C.UTF-8" }, stripFinalNewline: false, encoding: "utf8" });
    expect(stdout.split("\0").slice(0, -1)).toEqual(words);
  });
});
