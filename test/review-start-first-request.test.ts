import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { genesisFiles } from "../harness/deployment/index.ts";
import { startDevStack, type DevStack } from "../harness/index.ts";
import { QUEUE_PATHS } from "../src/paths.ts";
import { childProcesses } from "../harness/process/index.ts";
import { freePort, portOpen } from "./support/ports.ts";

// "For the committed local genesis, reuse what is deterministic, but verify it against the chain before
// the first request is answered" (issue 32, item 1). The runtime is built while anvil boots; here the
// chain contradicts the genesis's manifest once anvil is up (the Pool's code replaced, synchronously, in
// the "start anvil" step's progress event, before the stack takes its next step), while a client asks
// the queue's port again and again: no request may be answered, and the start is refused by name with
// nothing left running.
describe("a genesis stack's runtime, built ahead, answers nothing before its deployment is verified", () => {
  it("a chain that contradicts the genesis's manifest: the start is refused (DeploymentMismatchError), no request answered, nothing left", async () => {
    const [chainPort, queuePort] = [await freePort(), await freePort()];
    const manifest = JSON.parse(await readFile(genesisFiles("dev").manifest, "utf8")) as { poolAddress: string };
    const rpcUrl = `http://127.0.0.1:${chainPort}`;
    const steps: string[] = [];
    const answered: number[] = [];
    let starting = true;
    const poll = (async () => {
      while (starting) {
        const status = await new Promise<number | undefined>((resolve) => {
          const req = request({ host: "127.0.0.1", port: queuePort, path: QUEUE_PATHS.config, timeout: 1_000 }, (res) => (res.resume(), resolve(res.statusCode)));
          req.on("error", () => resolve(undefined));
          req.on("timeout", () => (req.destroy(), resolve(undefined)));
          req.end();
        });
        if (status !== undefined) answered.push(status);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    const before = new Set((await childProcesses()).map((p) => p.pid));
    const started = startDevStack({
      proofs: "dev",
      chainPort,
      queuePort,
      onProgress: ({ step }) => {
        steps.push(step);
        if (step !== "start anvil") return;
        // Blocks this process until anvil has the Pool's code replaced: nothing of the start runs meanwhile.
        const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_setCode", params: [manifest.poolAddress, "0x00"] });
        const script = `fetch(${JSON.stringify(rpcUrl)}, { method: "POST", headers: { "content-type": "application/json" }, body: ${JSON.stringify(body)} }).then((r) => r.json()).then((j) => { if (j.error) process.exit(3); })`;
        execFileSync(process.execPath, ["-e", script]);
      },
    });
    try {
      await expect(started).rejects.toMatchObject({ name: "DeploymentMismatchError", message: expect.stringMatching(/runtime code hash/) });
    } finally {
      starting = false;
      await poll;
      await (await started.catch(() => undefined))?.stop();
    }
    expect(steps).toContain("start anvil");
    expect(answered).toEqual([]);
    expect(await portOpen(`http://127.0.0.1:${queuePort}`)).toBe(false);
    expect(await portOpen(rpcUrl)).toBe(false);
    expect((await childProcesses()).filter((p) => !before.has(p.pid))).toEqual([]);
  });
});

describe("two genesis stacks started at once in one process", () => {
  it("each has its runtime built ahead and checked, its own chain, store and URLs; stopping one leaves the other serving", async () => {
    const steps: string[][] = [[], []];
    const stacks = await Promise.all(steps.map((mine) => startDevStack({ proofs: "dev", onProgress: ({ step, detail }) => void mine.push(`${step}: ${detail}`) })));
    try {
      const [a, b] = stacks as [DevStack, DevStack];
      for (const mine of steps) expect(mine).toContain("start queue runtime: built while anvil booted, checked against the chain before it listened");
      expect(new Set([a.rpcUrl, b.rpcUrl, a.queueUrl, b.queueUrl, a.stateDir, b.stateDir]).size).toBe(6);
      await a.stop();
      const response = await fetch(`${b.queueUrl}${QUEUE_PATHS.config}`);
      expect(response.status).toBe(200);
      expect(((await response.json()) as { poolAddress: string }).poolAddress).toBe(b.manifest.poolAddress);
    } finally {
      await Promise.all(stacks.map((stack) => stack.stop()));
    }
  });
});
