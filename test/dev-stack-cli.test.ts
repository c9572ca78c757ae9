import { mkdtemp, readFile } from "node:fs/promises";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { StackInfo } from "../harness/stack-info.ts";
import { alive, anvilsWith, gone } from "./support/processes.ts";

const CLI = ["--experimental-strip-types", "scripts/dev-stack.ts"];
const running: ResultPromise[] = [];
const anvils: number[] = [];
afterEach(async () => {
  // Graceful first, so each dev-stack stops its own anvil; then any anvil still alive, by its PID.
  for (const child of running.splice(0)) {
    child.kill("SIGTERM");
    await child.catch(() => {});
  }
  for (const pid of anvils.splice(0)) {
    if (alive(pid)) process.kill(pid, "SIGKILL");
  }
});

/** Starts `dev-stack --json` on free ports and waits for its one JSON line. */
async function launch(stateDir: string, extra: string[] = []) {
  const child = execa(process.execPath, [...CLI, "--chain-port", "0", "--queue-port", "0", "--state-dir", stateDir, "--json", ...extra], {
    reject: false,
    all: false,
  });
  running.push(child);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    let buffered = "";
    child.stdout?.on("data", (d: Buffer) => {
      buffered += d.toString();
      if (buffered.includes("\n")) resolve(buffered.split("\n")[0] as string);
    });
    void child.then((r) => reject(new Error(`dev-stack exited ${r.exitCode} before ready:\n${stderr}`)));
  });
  const info = StackInfo.parse(JSON.parse(line));
  anvils.push(info.processes.anvil.pid);
  return { child, info, stderr: () => stderr };
}

const portOpen = (url: string) =>
  new Promise<boolean>((resolve) => {
    const { hostname, port } = new URL(url);
    const socket = createConnection({ host: hostname, port: Number(port) });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });

const tempStateDir = () => mkdtemp(path.join(tmpdir(), "devstack-cli-"));

describe("npm run dev-stack", () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`${signal} stops everything: anvil gone (by PID), ports freed, exit 0`, async () => {
      const stateDir = await tempStateDir();
      const { child, info } = await launch(stateDir);
      expect(info.mode).toBe("local");
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
    });
  }

  it("finds the anvil a killed run left behind and stops it before starting", async () => {
    const stateDir = await tempStateDir();
    const first = await launch(stateDir);
    first.child.kill("SIGKILL"); // no chance to clean up: its anvil is orphaned
    await first.child;
    const orphan = first.info.processes.anvil.pid;
    expect(alive(orphan)).toBe(true);

    const second = await launch(stateDir);
    expect(second.stderr()).toContain(`stopped anvil pid ${orphan} left by a killed run`);
    expect(await gone(orphan)).toBe(true);
    expect(second.info.processes.anvil.pid).not.toBe(orphan);
    second.child.kill("SIGINT");
    expect((await second.child).exitCode).toBe(0);
    expect(await anvilsWith(stateDir)).toEqual([]);
  });

  it("refuses a state dir whose stack is still running", async () => {
    const stateDir = await tempStateDir();
    const first = await launch(stateDir);
    const second = await execa(process.execPath, [...CLI, "--chain-port", "0", "--queue-port", "0", "--state-dir", stateDir], { reject: false });
    expect(second.exitCode).toBe(1);
    expect(second.stderr).toContain(`a stack is already running from ${stateDir} (pid ${first.child.pid})`);
    expect(alive(first.info.processes.anvil.pid)).toBe(true);
  });

  it("fails clearly, exit 1, on an unreachable fork URL or a bad option", async () => {
    const stateDir = await tempStateDir();
    const fork = await execa(process.execPath, [...CLI, "--state-dir", stateDir, "--fork-url", "http://u:topsecret@127.0.0.1:9"], { reject: false });
    expect(fork.exitCode).toBe(1);
    expect(fork.stderr).toContain("ForkUpstreamError");
    expect(fork.stderr + fork.stdout).not.toContain("topsecret");
    expect(await anvilsWith(stateDir)).toEqual([]);

    const bad = await execa(process.execPath, [...CLI, "--chain-port", "nope"], { reject: false });
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain("--chain-port must be a non-negative integer");
  });
});
