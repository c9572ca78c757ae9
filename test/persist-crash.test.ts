import { createHash } from "node:crypto";
import { copyFile, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { PersistedStateError, startDevStack, StackInfo, type DevStack } from "../harness/index.ts";
import { closeProvers } from "../harness/client/index.ts";
import { DeploymentConfig } from "../src/config/deployment-config.ts";
import type { Operation } from "../src/schemas/operation.ts";
import { poolFixture, provenRequest } from "./support/pool.ts";
import { anvilsWith, endLaunches, gone } from "./support/processes.ts";
import { hex, rpc } from "./support/rpc.ts";
import { builtCli } from "./support/cli.ts";

// A persisted stack must never lose accepted operations or change its Pool because of a crash: of its
// owner (SIGKILL of dev-stack) or of anvil itself.
const CLI = builtCli();
const children: ResultPromise[] = [];
const stacks: DevStack[] = [];
afterEach(async () => {
  await endLaunches(children, "SIGKILL");
  await Promise.all(stacks.splice(0).map((s) => s.stop()));
});
const tempDirs: string[] = [];
afterAll(async () => {
  await closeProvers();
  await Promise.all(tempDirs.map((d) => rm(d, { recursive: true, force: true })));
});

const tempStateDir = async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "devstack-crash-"));
  tempDirs.push(dir);
  return dir;
};

/** `dev-stack --persist --json` in its own process; resolves with its stack.json once ready. */
async function launchPersisted(stateDir: string, extra: string[] = []) {
  const child = execa(process.execPath, [...CLI, "--chain-port", "0", "--queue-port", "0", "--state-dir", stateDir, "--persist", "--json", ...extra], { reject: false });
  children.push(child);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => ((out += d.toString()), out.includes("\n") && resolve(out.split("\n")[0] as string)));
    void child.then((r) => reject(new Error(`dev-stack exited ${r.exitCode}:\n${stderr}`)));
  });
  const info = StackInfo.parse(JSON.parse(line));
  return { child, info, stderr: () => stderr };
}

/** What the client-side fixtures need of a stack, from a CLI stack's stack.json. */
async function asStack(info: StackInfo): Promise<DevStack> {
  const manifest = DeploymentConfig.parse(JSON.parse(await readFile(info.manifestPath, "utf8")));
  return { manifest, queueUrl: info.queueUrl, rpcUrl: info.rpcUrl, accounts: info.devAccounts, relayer: info.relayer } as unknown as DevStack;
}

async function relaySend(stack: DevStack, pool: Awaited<ReturnType<typeof poolFixture>>): Promise<Operation> {
  const response = await fetch(`${stack.queueUrl}/api/queue/send-relay`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(await provenRequest(stack, pool, { amount: "4", toSelf: true })),
  });
  expect(response.status).toBe(202);
  return (await response.json()) as Operation;
}

async function statusUntil(queueUrl: string, id: string, done: (op: Operation) => boolean): Promise<Operation> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const op = (await (await fetch(`${queueUrl}/api/queue/send-status?id=${id}`)).json()) as Operation;
    if (done(op)) return op;
    if (Date.now() > deadline) throw new Error(`operation ${id} stuck in ${op.state}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a persisted stack after a crash", () => {
  it("dev-stack SIGKILLed: the next start resumes the same Pool, manifest and operations (confirmed and in flight)", async () => {
    const stateDir = await tempStateDir();
    // Two confirmations: the second operation stays in flight (included) until another block.
    const first = await launchPersisted(stateDir, ["--confirmations", "2"]);
    const stack = await asStack(first.info);
    const pool = await poolFixture(stack);
    const confirmed = await relaySend(stack, pool);
    await statusUntil(stack.queueUrl, confirmed.id, (op) => op.state === "included");
    await rpc(stack.rpcUrl, "anvil_mine", [hex(1)]);
    const done = await statusUntil(stack.queueUrl, confirmed.id, (op) => op.state === "confirmed");
    const inFlight = await relaySend(stack, pool);
    await statusUntil(stack.queueUrl, inFlight.id, (op) => op.state === "included");
    const manifest = await readFile(first.info.manifestPath);
    const head = await rpc<{ number: string; hash: string }>(stack.rpcUrl, "eth_getBlockByNumber", ["latest", false]);

    first.child.kill("SIGKILL");
    await first.child;
    expect(await gone(first.info.processes.anvil.pid)).toBe(true);

    const second = await launchPersisted(stateDir, ["--confirmations", "2"]);
    expect(second.stderr()).toContain("resume saved chain");
    expect((await readFile(second.info.manifestPath)).equals(manifest)).toBe(true);
    expect(second.info.poolAddress).toBe(first.info.poolAddress);
    expect((await rpc<{ hash: string }>(second.info.rpcUrl, "eth_getBlockByNumber", [head.number, false])).hash).toBe(head.hash);
    expect(await statusUntil(second.info.queueUrl, confirmed.id, () => true)).toMatchObject({ state: "confirmed", transactionHash: done.transactionHash });
    await rpc(second.info.rpcUrl, "anvil_mine", [hex(1)]);
    const resumed = await statusUntil(second.info.queueUrl, inFlight.id, (op) => op.terminal);
    expect(resumed.state).toBe("confirmed");
    second.child.kill("SIGINT");
    expect((await second.child).exitCode).toBe(0);
    expect(await anvilsWith(stateDir)).toEqual([]);
  });

  it("anvil itself SIGKILLed: the chain saved while it ran comes back, blocks and operations included", async () => {
    const stateDir = await tempStateDir();
    const first = await startDevStack({ stateDir, persist: true });
    stacks.push(first);
    const pool = await poolFixture(first);
    const op = await relaySend(first, pool);
    const confirmed = await statusUntil(first.queueUrl, op.id, (o) => o.state === "confirmed");
    const head = await rpc<{ number: string; hash: string }>(first.rpcUrl, "eth_getBlockByNumber", ["latest", false]);
    // The saver dumps each new block within moments; wait until the file holds the head.
    const chainState = path.join(stateDir, "chain-state.json");
    const deadline = Date.now() + 5_000;
    while ((JSON.parse(await readFile(chainState, "utf8")) as { best_block_number: string | number }).best_block_number.toString() !== BigInt(head.number).toString()) {
      if (Date.now() > deadline) throw new Error("the chain was not saved");
      await new Promise((r) => setTimeout(r, 50));
    }
    process.kill(first.chainPid, "SIGKILL"); // no graceful dump
    expect(await gone(first.chainPid)).toBe(true);
    await first.stop();

    const second = await startDevStack({ stateDir, persist: true });
    stacks.push(second);
    expect(second.manifest.poolAddress).toBe(first.manifest.poolAddress);
    expect((await rpc<{ hash: string }>(second.rpcUrl, "eth_getBlockByNumber", [head.number, false])).hash).toBe(head.hash);
    expect(await statusUntil(second.queueUrl, op.id, () => true)).toMatchObject({ state: "confirmed", transactionHash: confirmed.transactionHash });
  });

  it("refuses saved files that disagree, and changes nothing", async () => {
    const [a, b] = [await tempStateDir(), await tempStateDir()];
    for (const dir of [a, b]) await (await startDevStack({ stateDir: dir, persist: true })).stop();
    const snapshot = async (dir: string) => {
      const files = (await readdir(dir)).sort();
      const digest = async (f: string) => createHash("sha256").update(await readFile(path.join(dir, f))).digest("hex");
      return Promise.all(files.map(async (f) => [f, (await stat(path.join(dir, f))).isFile() ? await digest(f) : "dir"]));
    };
    // A manifest that the saved chain does not describe (another deployment block hash).
    const manifestFile = path.join(a, "manifest.json");
    const manifest = JSON.parse(await readFile(manifestFile, "utf8")) as { deploymentBlockHash: string };
    manifest.deploymentBlockHash = `0x${"ab".repeat(32)}`;
    await writeFile(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
    const before = await snapshot(a);
    await expect(startDevStack({ stateDir: a, persist: true })).rejects.toThrow(PersistedStateError);
    expect(await snapshot(a)).toEqual(before);
    expect(await anvilsWith(a)).toEqual([]);

    // A manifest without its chain: the operations cannot be resumed, so nothing is redeployed.
    await writeFile(path.join(b, "chain-state.json.bak"), await readFile(path.join(b, "chain-state.json")));
    await rm(path.join(b, "chain-state.json"));
    await expect(startDevStack({ stateDir: b, persist: true })).rejects.toThrow(/holds a manifest but no saved chain/);
    await expect(readFile(path.join(b, "manifest.json"))).resolves.toBeDefined();

    // A persisted state dir started without persist would lose its store: refused.
    await copyFile(path.join(b, "chain-state.json.bak"), path.join(b, "chain-state.json"));
    const store = await readFile(path.join(b, "queue.sqlite"));
    await expect(startDevStack({ stateDir: b })).rejects.toThrow(/holds a persisted stack/);
    expect((await readFile(path.join(b, "queue.sqlite"))).equals(store)).toBe(true);
  });
});
