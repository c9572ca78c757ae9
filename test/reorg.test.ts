import { execa } from "execa";
import { describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import type { QueueClient } from "../harness/client/index.ts";
import { poolFixture, provenSend } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { builtCli } from "./support/cli.ts";

// The reorg control (/api/dev/reorg, ctl reorg): an operation's block leaves the chain, and the client
// sees it go back to submitted or be included again elsewhere. Three confirmations, so it is not final yet.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let queue: QueueClient;

withQueueStack({ options: { relay: { requiredConfirmations: 3 } } }, (s) => ({ stack, pool, queue } = s));

const dev = async (path: string, body: unknown) => {
  const response = await fetch(`${stack.queueUrl}/api/dev/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};
const until = async <T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> => {
  for (let i = 0; i < 100; i++) {
    const value = await read();
    if (ok(value)) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("timed out waiting");
};

async function submittedSend(from: number) {
  const { config, transaction } = await provenSend(stack, pool, queue, from);
  const op = await queue.submit("send", config, transaction);
  return until(() => queue.status("send", op.id), (o) => o.state === "included");
}

describe("reorg", () => {
  it("with automine: the transaction is included again in another block, and confirmed after three", async () => {
    const included = await submittedSend(2);
    const cli = await execa(process.execPath, [...builtCli(), "ctl", "reorg", "1", "--json", "--state-dir", stack.stateDir], { reject: false });
    expect(cli.exitCode).toBe(0);
    const reorg = JSON.parse(cli.stdout) as { resent: string[]; mined: boolean };
    expect(reorg.resent).toContain(included.transactionHash);
    expect(reorg.mined).toBe(true);
    const again = await until(() => queue.status("send", included.id), (o) => o.state === "included" && o.block?.hash !== included.block?.hash);
    expect(again.transactionHash).toBe(included.transactionHash); // the same transaction
    expect(again.block?.number).toBeGreaterThan(included.block?.number as number);
    expect(again.history.map((h) => h.detail ?? "").some((d) => d.startsWith("reorg:"))).toBe(true);
    // An operator sees it in the metrics too.
    const metrics = await (await fetch(`${stack.queueUrl}/metrics`)).text();
    expect(Number(/^queue_reorgs_seen_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
    await dev("mine", { blocks: 2 });
    expect((await queue.waitFor("send", included.id)).state).toBe("confirmed");
  });

  it("with mining held: the operation goes back to submitted, its transaction waits in the mempool, and is included when mining resumes", async () => {
    const included = await submittedSend(3);
    await dev("mining", { mode: "hold" });
    try {
      expect((await dev("reorg", { depth: 1 })).body).toMatchObject({ mined: false });
      const back = await until(() => queue.status("send", included.id), (o) => o.state === "submitted");
      expect(back.block).toBeNull();
    } finally {
      await dev("mining", { mode: "auto" });
    }
    expect((await until(() => queue.status("send", included.id), (o) => o.state === "included")).transactionHash).toBe(included.transactionHash);
    await dev("mine", { blocks: 2 });
    expect((await queue.waitFor("send", included.id)).state).toBe("confirmed");
  });

  it("deeper than the chain is a 422 problem, and nothing changes", async () => {
    const before = await dev("mine", { blocks: 1 });
    const refused = await dev("reorg", { depth: (before.body.number as number) + 1 });
    expect(refused.status).toBe(422);
    expect((await dev("mine", { blocks: 1 })).body.number).toBe((before.body.number as number) + 1);
  });
});
