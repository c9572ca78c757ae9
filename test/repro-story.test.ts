import { copyFile, readFile } from "node:fs/promises";
import path from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { closeProvers, createQueueClient, reviewedFrom } from "../harness/client/index.ts";
import type { StackInfo } from "../harness/stack-info/index.ts";
import { parseManifest } from "../src/server.ts";
import { poolFixture, provenSend } from "./support/pool.ts";
import { withTempDirs } from "./support/temp-dirs.ts";
import { builtCli } from "./support/cli.ts";

// Issue 12's story, as a new user would go through it with the CLI: a stack with a reverted and a stuck
// operation is saved, loaded elsewhere from a copy of the file, the revert is traced, the stuck one resumes.
const tempDir = withTempDirs();
const CLI = builtCli();
const running: ResultPromise[] = [];
afterAll(async () => {
  await closeProvers();
  for (const cli of running) {
    cli.kill("SIGINT");
    await cli.catch(() => {});
  }
});

async function startCli(args: string[]): Promise<{ cli: ResultPromise; info: StackInfo }> {
  const cli = execa(process.execPath, [...CLI, ...args, "--json", "--chain-port", "0", "--queue-port", "0"], { reject: false });
  running.push(cli);
  const info = await new Promise<StackInfo>((resolve, reject) => {
    let out = "";
    cli.stdout?.on("data", (d: Buffer) => ((out += d.toString()), out.includes("\n") && resolve(JSON.parse(out.split("\n")[0] as string))));
    void cli.then((r) => reject(new Error(`the CLI exited ${r.exitCode}: ${r.stderr}`)));
  });
  return { cli, info };
}
const command = (...args: string[]) => execa(process.execPath, [...CLI, ...args], { reject: false });

describe("a repro, handed over as one file", () => {
  it("reverted and stuck operations saved, loaded elsewhere, the revert traced, the stuck one resumed", async () => {
    const here = await tempDir("devstack-story-");
    const first = await startCli(["--state-dir", here]);
    const ctl = (...args: string[]) => command("ctl", ...args, "--state-dir", here);
    // The client side, through what the CLI printed.
    const stack = { ...first.info, manifest: parseManifest(await readFile(first.info.manifestPath)), accounts: first.info.devAccounts } as unknown as DevStack;
    const pool = await poolFixture(stack);
    const queue = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
    const config = await queue.beforePrepare();
    const proven = async (from: number) => (await provenSend(stack, pool, queue, from)).transaction;
    const [one, two] = [await proven(2), await proven(3)];

    expect((await ctl("revert-next")).exitCode).toBe(0);
    const reverted = await queue.waitFor("send", (await queue.submit("send", config, one)).id);
    expect(reverted.state).toBe("reverted");
    expect((await ctl("relayer", "pause")).exitCode).toBe(0);
    const stuck = await queue.submit("send", config, two);
    expect((await queue.status("send", stuck.id)).state).toBe("accepted");

    const file = path.join(here, "repro.qdbundle");
    const saved = await command("save", file, "--state-dir", here);
    expect(saved.exitCode, saved.stderr).toBe(0);
    first.cli.kill("SIGINT");
    expect((await first.cli).exitCode).toBe(0);

    // Elsewhere: a copy of the file, an empty state dir.
    const there = await tempDir("devstack-story-elsewhere-");
    await copyFile(file, path.join(there, "from-a-colleague.qdbundle"));
    const second = await startCli(["--load", path.join(there, "from-a-colleague.qdbundle"), "--state-dir", path.join(there, "stack")]);
    const trace = await command("trace", reverted.id, "--state-dir", path.join(there, "stack"));
    expect(trace.exitCode, trace.stderr).toBe(0);
    expect(trace.stdout).toContain("InvalidProof");
    const again = createQueueClient({ baseUrl: second.info.queueUrl, reviewed: reviewedFrom(stack.manifest) });
    expect((await again.status("send", reverted.id)).state).toBe("reverted");
    // Loaded as saved: the stuck one waits for the developer to resume the relayer.
    expect((await again.status("send", stuck.id)).state).toBe("accepted");
    expect((await command("ctl", "relayer", "resume", "--state-dir", path.join(there, "stack"))).exitCode).toBe(0);
    expect((await again.waitFor("send", stuck.id, { timeoutMs: 30_000 })).state).toBe("confirmed");
  });
});
