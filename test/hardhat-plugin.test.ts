// The Hardhat 3 plugin (queue-devstack/hardhat) in the real Hardhat of node_modules, in-process: a
// runtime made with the plugin alone, in a temp project folder. The packed tarball with `npx hardhat
// test` is the consumer test's (scripts/consumer/hardhat.ts).
import { access, mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { createHardhatRuntimeEnvironment } from "hardhat/hre";
import type { HardhatRuntimeEnvironment } from "hardhat/types/hre";
import { afterAll, describe, expect, test } from "vitest";
import queueDevstackPlugin, { DEVSTACK_NETWORK } from "../harness/hardhat/index.ts";
import { alive, gone } from "./support/processes.ts";
import { rpc } from "./support/rpc.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

const tempDir = withTempDirs();

/** A project folder as Hardhat wants one: it takes the nearest package.json's folder as the root. */
async function project(): Promise<string> {
  const dir = await tempDir("hardhat-plugin-");
  await writeFile(path.join(dir, "package.json"), '{ "type": "module" }\n');
  return dir;
}

/** What `hardhat test` does at its end: the test hooks' onTestRunDone chain. */
const endTestRun = (hre: HardhatRuntimeEnvironment) => hre.hooks.runHandlerChain("test", "onTestRunDone", ["nodejs"], async () => {});

describe("queue-devstack/hardhat", () => {
  let hre: HardhatRuntimeEnvironment | undefined;
  afterAll(async () => {
    if (hre) await endTestRun(hre); // stops the stack if a failed test left it running
  });

  test("network.connect('devstack') starts a stack and carries it; reset undoes a change; the run's end stops it; a new connection starts it again on the same ports", async () => {
    hre = await createHardhatRuntimeEnvironment({ plugins: [queueDevstackPlugin], devstack: { store: ":memory:" } }, {}, await project());
    const connection = await hre.network.connect(DEVSTACK_NETWORK);
    const { devstack, provider } = connection;

    // The connection's provider is the stack's anvil; its accounts are the dev accounts.
    expect(connection.networkConfig.type).toBe("http");
    expect(await provider.request({ method: "eth_chainId" })).toBe("0xaa36a7");
    expect(await rpc(devstack.rpcUrl, "eth_chainId")).toBe("0xaa36a7");
    const accounts = (await provider.request({ method: "eth_accounts" })) as string[];
    expect(accounts.map((a) => a.toLowerCase())).toContain(devstack.accounts[1]?.address.toLowerCase());
    // The manifest, and the typed queue client of the same stack.
    expect((await provider.request({ method: "eth_getCode", params: [devstack.manifest.poolAddress, "latest"] })) as string).not.toBe("0x");
    const served = await devstack.queue.beforePrepare();
    expect(served.poolAddress).toBe(devstack.manifest.poolAddress);

    // A second connection gets the same stack, not a second one.
    const again = await hre.network.connect(DEVSTACK_NETWORK);
    expect(again.devstack.chainPid).toBe(devstack.chainPid);

    // reset(): back to the stack as it started.
    const before = await provider.request({ method: "eth_blockNumber" });
    await provider.request({ method: "evm_mine", params: [] });
    expect(await provider.request({ method: "eth_blockNumber" })).not.toBe(before);
    await devstack.reset();
    expect(await provider.request({ method: "eth_blockNumber" })).toBe(before);

    // loadFixture: the setup runs once; the next call restores its state.
    let runs = 0;
    const mined = async () => {
      runs++;
      await provider.request({ method: "evm_mine", params: [] });
      return provider.request({ method: "eth_blockNumber" });
    };
    const first = await devstack.loadFixture(mined);
    await provider.request({ method: "evm_mine", params: [] });
    expect(await devstack.loadFixture(mined)).toBe(first);
    expect(runs).toBe(1);
    expect(await provider.request({ method: "eth_blockNumber" })).toBe(first);

    // The end of the test run stops the stack: anvil gone, its temp state dir removed.
    const { chainPid, stateDir } = devstack;
    await endTestRun(hre);
    expect(await gone(chainPid)).toBe(true);
    await expect(access(stateDir)).rejects.toThrow();

    // A later connection starts a stack again, where Hardhat's cached URL points.
    const restarted = await hre.network.connect(DEVSTACK_NETWORK);
    expect(restarted.devstack.chainPid).not.toBe(chainPid);
    expect(alive(restarted.devstack.chainPid)).toBe(true);
    expect(restarted.devstack.rpcUrl).toBe(devstack.rpcUrl);
    expect(await restarted.provider.request({ method: "eth_chainId" })).toBe("0xaa36a7");
  }, 120_000);

  // node:test under Hardhat (isolation none) ends its run only when the event loop is empty: a stack
  // holding the loop (as one in the main thread did) hung `npx hardhat test` after its tests passed.
  /** A script in a project of its own that makes a Hardhat runtime with the plugin, then runs `lines`: it must end by itself, its stack gone; what it printed last. */
  async function runAlone<T>(lines: string[], config = "{ plugins: [plugin] }"): Promise<T> {
    const dir = await project();
    const script = [
      `import { createHardhatRuntimeEnvironment } from ${JSON.stringify(pathToFileURL(createRequire(import.meta.url).resolve("hardhat/hre")).href)};`,
      `import plugin from ${JSON.stringify(path.resolve(import.meta.dirname, "../harness/hardhat/index.ts"))};`,
      `const hre = await createHardhatRuntimeEnvironment(${config}, {}, ${JSON.stringify(dir)});`,
      'const { devstack } = await hre.network.create("devstack");',
      ...lines,
      "console.log(JSON.stringify({ ...result, pid: devstack.chainPid, stateDir: devstack.stateDir }));",
    ].join("\n");
    await writeFile(path.join(dir, "connect.mjs"), script);
    const run = await execa(process.execPath, ["connect.mjs"], { cwd: dir, timeout: 60_000, reject: false });
    expect(run.timedOut, "the process did not end by itself").toBe(false);
    expect(run.exitCode, run.stderr).toBe(0);
    const printed = JSON.parse(run.stdout) as T & { pid: number; stateDir: string };
    expect(await gone(printed.pid)).toBe(true);
    await expect(access(printed.stateDir)).rejects.toThrow();
    return printed;
  }

  test("a process that connected ends by itself once it has nothing else to do: the stack stopped, nothing left", async () => {
    await runAlone(["await devstack.reset();", "const result = {};"]);
  }, 90_000);

  // The setup runs in the main thread when the stack's worker asks: one that threw before returning its
  // promise was called inside a message handler, an uncaught exception that ended the process.
  test("a fixture's setup that throws at once rejects loadFixture with its error; one that returns a plain value gives it (as Hardhat's loadFixture)", async () => {
    const result = await runAlone<{ thrown: string; value: number }>(
      [
        'const thrown = await devstack.loadFixture(() => { throw new Error("setup broke"); }).then(() => "resolved", (error) => error.message);',
        "const result = { thrown, value: await devstack.loadFixture(() => 42) };",
      ],
      '{ plugins: [plugin], devstack: { store: ":memory:" } }',
    );
    expect(result).toMatchObject({ thrown: "setup broke", value: 42 });
  }, 90_000);

  // Issue 40, item 9: `npx hardhat …` runs Hardhat under npm's sh -c, which keeps a SIGINT to npx's PID
  // to itself until Hardhat ends: Hardhat and its anvil ran on for more than 9 s.
  test("SIGINT to the PID of npx running Hardhat with the stack (npm's sh keeps it from Hardhat): Hardhat, its anvil, the sh and npx end within 5 s, the stack's temp dir removed", async () => {
    const dir = await project();
    await symlink(path.resolve("node_modules"), path.join(dir, "node_modules")); // npx finds hardhat's bin there
    await writeFile(path.join(dir, "hardhat.config.js"), `import plugin from ${JSON.stringify(path.resolve(import.meta.dirname, "../harness/hardhat/index.ts"))};\nexport default { plugins: [plugin] };\n`);
    // A script holding the stack until interrupted (a test waiting on it would be the same process).
    const started = path.join(dir, "started.json");
    await writeFile(
      path.join(dir, "hold.mjs"),
      [
        'import { writeFileSync } from "node:fs";',
        'import { network } from "hardhat";',
        'const { devstack } = await network.create("devstack");',
        `writeFileSync(${JSON.stringify(started)}, JSON.stringify({ hardhat: process.pid, shell: process.ppid, anvil: devstack.chainPid, stateDir: devstack.stateDir }));`,
        "setInterval(() => {}, 1000);",
      ].join("\n"),
    );
    // Hardhat's tsx and Node's compile cache go to TMPDIR: the project's own, removed with it.
    const tmp = path.join(dir, "tmp");
    await mkdir(tmp);
    // A process group of its own: a failed run is stopped whole, its sh and Hardhat included, even before they said their PIDs.
    const npx = execa("npx", ["hardhat", "run", "--no-compile", "hold.mjs"], { cwd: dir, reject: false, all: true, env: { TMPDIR: tmp }, detached: true });
    let ended = false;
    void npx.then(() => (ended = true));
    let pids: { hardhat: number; shell: number; anvil: number; stateDir: string } | undefined;
    try {
      const deadline = Date.now() + 60_000;
      while ((pids = await readFile(started, "utf8").then((text) => JSON.parse(text) as typeof pids, () => undefined)) === undefined) {
        if (Date.now() > deadline || ended) throw new Error(`the script never started its stack${ended ? `: ${(await npx).all}` : ""}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(pids.shell).not.toBe(npx.pid); // npx's sh -c sits between npx and Hardhat
      npx.kill("SIGINT");
      const signalled = Date.now();
      for (const pid of [pids.hardhat, pids.anvil, pids.shell, npx.pid as number]) expect(await gone(pid, Math.max(0, signalled + 5_000 - Date.now())), `pid ${pid}`).toBe(true);
      expect((await npx).signal).toBe("SIGINT");
      await expect(access(pids.stateDir)).rejects.toThrow();
    } finally {
      // A failed run leaves nothing either: the launch's process group, then every process of it by its PID.
      try {
        process.kill(-(npx.pid as number), "SIGKILL");
      } catch {
        // the group has ended
      }
      for (const pid of [npx.pid, pids?.shell, pids?.hardhat, pids?.anvil]) if (pid !== undefined && alive(pid)) process.kill(pid, "SIGKILL");
      await npx;
    }
  }, 90_000);

  test("a connection to another network says where the stack is, and starts none", async () => {
    const other = await createHardhatRuntimeEnvironment({ plugins: [queueDevstackPlugin] }, {}, await project());
    const connection = await other.network.connect();
    expect(() => connection.devstack).toThrow(/connect to "devstack"/);
    await connection.close();
  }, 60_000);
});
