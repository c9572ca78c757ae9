import { chmod, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { execa, type ResultPromise } from "execa";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { STACK_URLS, StackInfo } from "../harness/stack-info/index.ts";
import { requestWithHost } from "./support/forged-host.ts";
import { loadedModulesPreload } from "./support/loaded-modules.ts";
import { freePort, holdPort, portOpen } from "./support/ports.ts";
import { alive, anvilsWith, endLaunches, gone } from "./support/processes.ts";
import { withTempDirs } from "./support/temp-dirs.ts";
import { builtCli, SOURCE_CLI } from "./support/cli.ts";

const tempDir = withTempDirs();
const CLI = builtCli();
/** What a test started (stopped after it), or a describe's shared launch (stopped after the file's tests). */
type Launches = { running: ResultPromise[]; anvils: number[] };
const perTest: Launches = { running: [], anvils: [] };
const perFile: Launches = { running: [], anvils: [] };
/** Graceful first, so each dev-stack stops its own anvil; then any anvil still alive, by its PID. */
const stopLaunches = ({ running, anvils }: Launches) => endLaunches(running, "SIGTERM", anvils);
afterEach(() => stopLaunches(perTest));
afterAll(() => stopLaunches(perFile));
const { running, anvils } = perTest;

/** Starts `dev-stack --json` (on free ports unless `extra` names them) without waiting. */
function spawnDevStack(stateDir: string, extra: string[] = [], env: Record<string, string> = {}, owner = perTest) {
  const ports = extra.includes("--chain-port") ? [] : ["--chain-port", "0", "--queue-port", "0"];
  const child = execa(process.execPath, [...CLI, ...ports, "--state-dir", stateDir, "--json", ...extra], { reject: false, all: false, env });
  owner.running.push(child);
  let stderr = "";
  let stdout = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
  /** Resolves once stderr (progress, under --json) contains `text`. */
  const stderrShows = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const look = () => stderr.includes(text) && (child.stderr?.off("data", look), resolve());
      child.stderr?.on("data", look);
      look();
      void child.then((r) => reject(new Error(`dev-stack exited ${r.exitCode} before printing ${text}:\n${stderr}`)));
    });
  return { child, stderr: () => stderr, stdout: () => stdout, stderrShows };
}

/** Starts `dev-stack --json` and waits for its one JSON line. */
async function launch(stateDir: string, extra: string[] = [], env: Record<string, string> = {}, owner = perTest) {
  const run = spawnDevStack(stateDir, extra, env, owner);
  const line = await new Promise<string>((resolve, reject) => {
    const look = () => run.stdout().includes("\n") && resolve(run.stdout().split("\n")[0] as string);
    run.child.stdout?.on("data", look);
    void run.child.then((r) => reject(new Error(`dev-stack exited ${r.exitCode} before ready:\n${run.stderr()}`)));
  });
  const info = StackInfo.parse(JSON.parse(line));
  owner.anvils.push(info.processes.anvil.pid);
  return { ...run, info };
}

const tempStateDir = () => tempDir("devstack-cli-");

/**
 * Starts the CLI through a launcher (npm, npx) with `--json` on free ports, as a CI script would (`&`),
 * and waits for its JSON line; the stack's owner and anvil are tracked for the clean-up.
 */
async function launchThrough(launcher: string[], cwd: string, stateDir: string) {
  const child = execa(launcher[0] as string, [...launcher.slice(1), "--chain-port", "0", "--queue-port", "0", "--state-dir", stateDir, "--json"], { cwd, reject: false });
  running.push(child);
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    // npm prints its banner first: the stack's line is the one that starts with {.
    child.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString();
      const found = stdout.split("\n").find((l) => l.startsWith("{"));
      if (found && stdout.includes(`${found}\n`)) resolve(found);
    });
    void child.then((r) => reject(new Error(`${launcher.join(" ")} exited ${r.exitCode} before ready:\n${stderr}`)));
  });
  const info = StackInfo.parse(JSON.parse(line));
  anvils.push(info.processes.anvil.pid, info.processes.owner.pid);
  return { child, info, stderr: () => stderr };
}

/** Everything of a launch is gone: the stack's node and anvil (by PID), its ports, any anvil of its state dir. */
async function expectAllGone(info: StackInfo, stateDir: string) {
  expect(await gone(info.processes.owner.pid)).toBe(true);
  expect(await gone(info.processes.anvil.pid)).toBe(true);
  expect(await portOpen(info.rpcUrl)).toBe(false);
  expect(await portOpen(info.queueUrl)).toBe(false);
  expect(await anvilsWith(stateDir)).toEqual([]);
}

/** A project that has the CLI as an installed bin (node_modules/.bin/queue-devstack, as npm links it), for npx. */
async function projectWithBin(): Promise<string> {
  const project = await tempDir("devstack-npx-");
  await writeFile(path.join(project, "package.json"), JSON.stringify({ name: "consumer", private: true }));
  await mkdir(path.join(project, "node_modules", ".bin"), { recursive: true });
  const bin = path.join(project, "node_modules", ".bin", "queue-devstack");
  // The installed bin: this run's build of scripts/cli/queue-devstack.ts, as npm run build makes it.
  await writeFile(bin, `#!/usr/bin/env node\nimport(${JSON.stringify(pathToFileURL(builtCli()[0] as string).href)});\n`);
  await chmod(bin, 0o755);
  return project;
}

/** The parent of a process (/proc, Linux). */
const parentOf = async (pid: number) => Number(/^PPid:\s+(\d+)/m.exec(await readFile(`/proc/${pid}/status`, "utf8"))?.[1]);

describe("npx queue-devstack, as a project that installed it runs it", () => {
  it("npx queue-devstack --help speaks as the installed command, not of this repository's npm run (issue 30, item 10)", async () => {
    const help = await execa("npx", ["queue-devstack", "--help"], { cwd: await projectWithBin() });
    expect(help.stdout.split("\n")[0]).toMatch(/^Usage: npx queue-devstack \[options\] +\(in a package\.json script: queue-devstack \[options\]\)$/);
    expect(help.stdout).not.toMatch(/npm run|this repository/);
  });
});

describe("a signal to any process of the launch stops the stack (issue 30, item 4)", () => {
  it("every npm script that runs one node command runs it in place of npm's sh (exec): npm's signals reach it", async () => {
    const { scripts } = JSON.parse(await readFile("package.json", "utf8")) as { scripts: Record<string, string> };
    expect(Object.entries(scripts).filter(([, command]) => /^node\s/.test(command))).toEqual([]);
  });

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`${signal} to npm run dev-stack's PID: npm waits for the stack to stop, nothing is left`, async () => {
      const stateDir = await tempStateDir();
      const { child, info } = await launchThrough(["npm", "run", "dev-stack", "--"], process.cwd(), stateDir);
      expect(await parentOf(info.processes.owner.pid)).toBe(child.pid); // no sh between npm and node
      child.kill(signal);
      const result = await child;
      // npm ends once the stack has stopped: nothing of it is running when npm's exit is seen.
      expect(result.exitCode, result.stderr?.toString()).toBe(0);
      expect(alive(info.processes.anvil.pid)).toBe(false);
      await expectAllGone(info, stateDir);
    });
  }

  it("SIGINT to npx queue-devstack's PID (npm's sh keeps it from the bin): the stack stops, then npx ends by SIGINT, nothing is left", async () => {
    const stateDir = await tempStateDir();
    const { child, info, stderr } = await launchThrough(["npx", "queue-devstack"], await projectWithBin(), stateDir);
    const shell = await parentOf(info.processes.owner.pid);
    expect(shell).not.toBe(child.pid); // npx's sh -c sits between: the case npm's exec cannot help
    child.kill("SIGINT");
    // npm ends the way its sh did, which ends as the bin has: so the stack has stopped when npx is seen to end.
    expect((await child).signal).toBe("SIGINT");
    expect(stderr()).toMatch(/SIGINT to npm's \w+ -c \(pid \d+\): stopping the stack/);
    expect(alive(info.processes.anvil.pid)).toBe(false);
    await expectAllGone(info, stateDir);
  });

  it("SIGTERM to npx's PID (its sh dies at once) and SIGINT to its sh: the stack stops, nothing is left", async () => {
    const project = await projectWithBin();
    const term = await tempStateDir();
    const first = await launchThrough(["npx", "queue-devstack"], project, term);
    first.child.kill("SIGTERM");
    expect((await first.child).signal).toBe("SIGTERM"); // at once: the stack stops moments later
    await expectAllGone(first.info, term);

    const int = await tempStateDir();
    const second = await launchThrough(["npx", "queue-devstack"], project, int);
    process.kill(await parentOf(second.info.processes.owner.pid), "SIGINT");
    expect((await second.child).signal).toBe("SIGINT");
    await expectAllGone(second.info, int);
  });
});

describe("npm run dev-stack", () => {
  /** What any launch shows while it runs, then `signal` stops everything: anvil gone (by PID), ports freed, exit 0. */
  async function runsThenStops(run: Awaited<ReturnType<typeof launch>>, stateDir: string, signal: "SIGINT" | "SIGTERM") {
    const { child, info, stderr, stderrShows } = run;
    expect(info.mode).toBe("local");
    // The summary (on stderr under --json) names the dashboard, and the page is there.
    await stderrShows("Ctrl-C stops everything.");
    expect(stderr()).toContain(`  dashboard       ${info.queueUrl}/api/dev/dashboard\n`);
    const page = await fetch(`${info.queueUrl}/api/dev/dashboard`);
    expect([page.status, page.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
    await page.text();
    expect(alive(info.processes.anvil.pid)).toBe(true);
    expect(await portOpen(info.rpcUrl)).toBe(true);
    const config = await (await fetch(`${info.queueUrl}/api/queue/config`)).text();
    expect(config).toBe(await readFile(info.manifestPath, "utf8"));

    child.kill(signal);
    const result = await child;
    expect(result.exitCode).toBe(0);
    expect(await gone(info.processes.anvil.pid)).toBe(true);
    expect(await portOpen(info.rpcUrl)).toBe(false);
    expect(await portOpen(info.queueUrl)).toBe(false);
    expect(await anvilsWith(stateDir)).toEqual([]);
  }

  it("SIGTERM stops everything: anvil gone (by PID), ports freed, exit 0", async () => {
    const stateDir = await tempStateDir();
    await runsThenStops(await launch(stateDir), stateDir, "SIGTERM");
  });

  // One launch for the tests that only read a running stack (each started its own: four launches); the
  // last stops it with SIGINT, checked as the SIGTERM test above.
  describe("one stack with --verbose and --allowed-host, then SIGINT", () => {
    let stateDir: string;
    let run: Awaited<ReturnType<typeof launch>>;
    beforeAll(async () => {
      stateDir = await tempStateDir();
      run = await launch(stateDir, ["--verbose", "--allowed-host", "devbox.test"], {}, perFile);
      await run.stderrShows("Ctrl-C stops everything.");
    });

    it("the summary and stack.json (the --json line) name the same URLs, every one the list names, and each answers (issue 30, item 5); it numbers the accounts as exec does, with anvil's own number (item 11)", async () => {
      const printed = [...run.stderr().matchAll(/^ {2}(\S.{15})(https?:\/\/\S+)/gm)].map(([, label, url]) => [(label as string).trim(), url]);
      expect(printed).toEqual(STACK_URLS.map(({ key, label }) => [label, run.info[key]]));
      expect(run.stdout()).toBe(`${JSON.stringify(run.info)}\n`);
      expect(JSON.parse(await readFile(path.join(run.info.stateDir, "stack.json"), "utf8"))).toEqual(run.info);
      for (const url of [run.info.configUrl, run.info.docsUrl, run.info.dashboardUrl]) {
        const answer = await fetch(url);
        expect([url, answer.status]).toEqual([url, 200]);
        await answer.arrayBuffer();
      }
      const rpc = async (method: string) =>
        ((await (await fetch(run.info.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] }) })).json()) as { result: unknown }).result;
      expect(await rpc("eth_chainId")).toBe("0xaa36a7");
      // Account #i is stack.json's devAccounts[i] (exec's QUEUE_DEVSTACK_ACCOUNT_<i>), and anvil's own list says which of its accounts it is.
      const anvilAccounts = ((await rpc("eth_accounts")) as string[]).map((a) => a.toLowerCase());
      const listed = [...run.stderr().matchAll(/^ +#(\d+) \(anvil #(\d+)\) {2}(0x[0-9a-fA-F]{40}) /gm)].map(([, i, anvil, address]) => [Number(i), Number(anvil), address]);
      expect(listed.map(([i]) => i)).toEqual(run.info.devAccounts.map((_, i) => i));
      for (const [i, anvil, address] of listed) {
        expect(address).toBe(run.info.devAccounts[i as number]?.address);
        expect(anvilAccounts[anvil as number]).toBe((address as string).toLowerCase());
      }
      expect(listed[1]?.[1]).toBe(2); // anvil's #1 is the relayer
      expect(anvilAccounts[1]).toBe(run.info.relayer.address.toLowerCase());
    });

    it("--json --verbose: request logs go to stderr (stdout carries the one JSON line: checked once it stopped, below)", async () => {
      expect((await fetch(`${run.info.queueUrl}/api/queue/config`)).status).toBe(200);
      await run.stderrShows("request completed");
      expect(run.stderr()).toContain('"url":"/api/queue/config"');
    });

    it("--allowed-host: the dev routes also answer under that name; other names are refused", async () => {
      const port = new URL(run.info.queueUrl).port;
      expect((await requestWithHost(`${run.info.queueUrl}/api/dev/faults`, `devbox.test:${port}`)).status).toBe(200);
      expect((await requestWithHost(`${run.info.queueUrl}/api/dev/faults`, `localhost:${port}`)).status).toBe(200);
      const refused = await requestWithHost(`${run.info.queueUrl}/api/dev/faults`, `evil.example:${port}`);
      expect(refused.status).toBe(403);
      expect(JSON.parse(refused.body)).toMatchObject({ code: "host_not_allowed" });
    });

    it("refuses a state dir whose stack is still running", async () => {
      const second = await execa(process.execPath, [...CLI, "--chain-port", "0", "--queue-port", "0", "--state-dir", stateDir], { reject: false });
      expect(second.exitCode).toBe(1);
      expect(second.stderr).toContain(`a stack is already running from ${stateDir} (pid ${run.child.pid})`);
      expect(alive(run.info.processes.anvil.pid)).toBe(true);
    });

    it("SIGINT stops everything: anvil gone (by PID), ports freed, exit 0; under --verbose, stdout carried the one JSON line only", async () => {
      await runsThenStops(run, stateDir, "SIGINT");
      expect(run.stdout()).toBe(`${JSON.stringify(run.info)}\n`);
    });
  });

  it("SIGKILLed during start-up, its anvil dies with it, and the next start gets the same port", async () => {
    const stateDir = await tempStateDir();
    const chainPort = String(await freePort());
    const first = spawnDevStack(stateDir, ["--chain-port", chainPort, "--queue-port", "0"]);
    await first.stderrShows("start anvil"); // anvil is up; the runtime is still to come
    const [orphan] = await anvilsWith(stateDir);
    expect(orphan).toBeGreaterThan(0);
    anvils.push(orphan as number);
    first.child.kill("SIGKILL");
    await first.child;
    expect(await gone(orphan as number, 5_000)).toBe(true); // the orphan guard, not a cleanup of ours
    // Killed before it was ready (the genesis's manifest is written at once now: stack.json comes last).
    await expect(readFile(path.join(stateDir, "stack.json"))).rejects.toThrow(/ENOENT/);

    const second = await launch(stateDir, ["--chain-port", chainPort, "--queue-port", "0"]);
    expect(second.info.rpcUrl).toBe(`http://127.0.0.1:${chainPort}`);
    second.child.kill("SIGINT");
    expect((await second.child).exitCode).toBe(0);
    expect(await anvilsWith(stateDir)).toEqual([]);
  });

  it("without the orphan guard, a run killed at any step leaves an anvil the next start finds and stops", async () => {
    const stateDir = await tempStateDir();
    const chainPort = String(await freePort());
    const env = { DEVSTACK_ORPHAN_GUARD: "off" };
    // Killed during start-up (before stack.json exists), then killed once ready.
    const first = spawnDevStack(stateDir, ["--chain-port", chainPort, "--queue-port", "0"], env);
    await first.stderrShows("start anvil");
    first.child.kill("SIGKILL");
    await first.child;
    const [orphan] = await anvilsWith(stateDir);
    expect(orphan).toBeGreaterThan(0);
    anvils.push(orphan as number);
    expect(alive(orphan as number)).toBe(true);

    const second = await launch(stateDir, ["--chain-port", chainPort, "--queue-port", "0"], env);
    expect(second.stderr()).toContain(`stopped anvil pid ${orphan} left by a killed run`);
    expect(await gone(orphan as number)).toBe(true);
    second.child.kill("SIGKILL");
    await second.child;
    const orphan2 = second.info.processes.anvil.pid;
    expect(alive(orphan2)).toBe(true);

    const third = await launch(stateDir, ["--chain-port", chainPort, "--queue-port", "0"], env);
    expect(third.stderr()).toContain(`stopped anvil pid ${orphan2} left by a killed run`);
    expect(await gone(orphan2)).toBe(true);
    third.child.kill("SIGINT");
    expect((await third.child).exitCode).toBe(0);
    expect(await anvilsWith(stateDir)).toEqual([]);
  });

  it("--help lists every option; a port in use is named, with what to do, before anything starts or is written", async () => {
    const help = await execa(process.execPath, [...CLI, "--help"]);
    for (const option of ["--fork-url", "--fork-block-number", "--pool", "--deployment-block", "--state-dir", "--persist", "--chain-port", "--queue-port", "--host", "--confirmations", "--cors-origin", "--allowed-host", "--json", "--verbose", "--help"]) {
      expect(help.stdout).toContain(option);
    }
    const holder = await holdPort();
    try {
      // The four refusals side by side (each its own state dir; they share only the port held).
      await Promise.all(
        ["--chain-port", "--queue-port"].map(async (flag) => {
          // A new state dir, and one that holds a file of the user's.
          const parent = await tempStateDir();
          const fresh = path.join(parent, "new", "state");
          await writeFile(path.join(parent, "notes.txt"), "mine");
          await Promise.all(
            [fresh, parent].map(async (stateDir) => {
              const other = flag === "--chain-port" ? "--queue-port" : "--chain-port";
              const run = await execa(process.execPath, [...CLI, "--state-dir", stateDir, flag, String(holder.port), other, "0"], { reject: false });
              expect(run.exitCode).toBe(1);
              expect(run.stderr).toContain(`queue-devstack: port ${holder.port} (${flag}) is in use: stop what holds it (another stack?), or pass ${flag} 0 for any free port`);
              expect(run.stdout).not.toContain("start anvil");
              expect(await anvilsWith(stateDir)).toEqual([]);
            }),
          );
          // The state dir as it was found: the new one not made, the other with the user's file only.
          expect(await readdir(parent)).toEqual(["notes.txt"]);
        }),
      );
    } finally {
      await holder.release();
    }
  });

  it("--help and a mistake in the command line answer before the harness is loaded (viem, fastify: over a second of a launch)", async () => {
    const { preload, out, read } = await loadedModulesPreload(await tempDir("devstack-loaded-"));
    // Side by side, each launch writing what it loaded to a file of its own.
    const launches = [["--help"], ["--frok-url", "x"], ["--chain-port", "nope"], ["exec", "--runs", "0", "--", "true"], ["exec", "--"]];
    await Promise.all(
      launches.map(async (args, i) => {
        const written = `${out}.${i}`;
        // From source: the modules loaded are this repository's files (the build is one bundle).
        const run = await execa(process.execPath, ["--import", preload, ...SOURCE_CLI, ...args], { reject: false, env: { LOADED_MODULES_OUT: written } });
        expect(run.exitCode, args.join(" ")).toBe(args[0] === "--help" ? 0 : 2);
        const loaded = await read(written);
        expect(loaded, args.join(" ")).toContain(pathToFileURL(path.resolve("scripts/cli/dev-stack.ts")).href);
        expect(loaded.filter((url) => /\/(harness|node_modules)\//.test(url)), args.join(" ")).toEqual([]);
      }),
    );
  });

  it("fails clearly: exit 1 on an unreachable fork URL, exit 2 on a bad command line", async () => {
    const stateDir = await tempStateDir();
    // Free ports, as every test: on the default ones, a stack already there (a developer's) would fail it otherwise.
    const forkRun = execa(process.execPath, [...CLI, "--chain-port", "0", "--queue-port", "0", "--state-dir", stateDir, "--fork-url", "http://u:topsecret@127.0.0.1:9"], { reject: false });

    // A mistake in the command line: one line and the hint, exit code 2, nothing started (the launches side by side).
    const mistakes = [
      // One message per option, naming its range, whatever is wrong with the value (issue 30, item 11).
      [["--chain-port", "nope"], 'queue-devstack: --chain-port must be an integer from 0 to 65535, got "nope"'],
      [["--chain-port", "70000"], 'queue-devstack: --chain-port must be an integer from 0 to 65535, got "70000"'],
      [["--fork-block-number", "1e3"], 'queue-devstack: --fork-block-number must be an integer of at least 0, got "1e3"'],
      [["--frok-url", "x"], "queue-devstack: unknown option --frok-url"],
      [["--state-dir"], "queue-devstack: --state-dir needs a value"],
      [["start-it"], "queue-devstack: unexpected argument start-it"],
      [["--confirmations", "0"], 'queue-devstack: --confirmations must be an integer of at least 1, got "0"'],
      [["--confirmations", "1.5"], 'queue-devstack: --confirmations must be an integer of at least 1, got "1.5"'],
      // A negative number is the option's value, wrong, not a missing one (issue 40, item 10).
      [["--chain-port", "-1"], 'queue-devstack: --chain-port must be an integer from 0 to 65535, got "-1"'],
      [["--fork-block-number", "-5"], 'queue-devstack: --fork-block-number must be an integer of at least 0, got "-5"'],
      [["--cors-origin", "app.example"], 'queue-devstack: --cors-origin: CORS origin "app.example" is not an origin: give scheme://host[:port], like https://app.example, or "loopback"'],
      [["--allowed-host", "http://devbox.test"], 'queue-devstack: --allowed-host: allowed host "http://devbox.test" is not a host name: give a name (devbox.local), an IP address, or .name for a name and its subdomains; no scheme or port'],
    ] as const;
    await Promise.all(
      mistakes.map(async ([args, says]) => {
        const bad = await execa(process.execPath, [...CLI, ...args], { reject: false });
        expect(bad.exitCode, args.join(" ")).toBe(2);
        expect(bad.stderr).toBe(`${says}\nRun with --help for the options.`);
      }),
    );

    const fork = await forkRun;
    expect(fork.exitCode).toBe(1);
    expect(fork.stderr).toContain("ForkUpstreamError");
    expect(fork.stderr + fork.stdout).not.toContain("topsecret");
    expect(await anvilsWith(stateDir)).toEqual([]);
  });
});
