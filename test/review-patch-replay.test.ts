import { execa } from "execa";
import { expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import type { QueueClient } from "../harness/client/index.ts";
import { poolFixture, provenSend } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { rpc } from "./support/rpc.ts";
import { builtCli } from "./support/cli.ts";

// A replay's verdict is what `git bisect run` reads: 1 calls the commit bad. A refusal that says the stack
// cannot take any relay now (a 503: the relayer unfunded, the gas price above its cap, the queue full) is
// no verdict on the operation: it cannot be judged (125), never "bad".
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let queue: QueueClient;
withQueueStack({}, (s) => ({ stack, pool, queue } = s));

const replayCli = (id: string) => execa(process.execPath, [...builtCli(), "replay", id, "--state-dir", stack.stateDir], { reject: false });

it("a relayer that cannot pay for a relay: the replay cannot be judged (503 relayer_unfunded, exit 125), and is judged again once funded", async () => {
  const { config, transaction } = await provenSend(stack, pool, queue, 6);
  stack.faults.revertNextRelay();
  const op = await queue.waitFor("send", (await queue.submit("send", config, transaction)).id);
  expect(op.state).toBe("reverted");
  expect((await stack.replay(op.id)).verdict.exitCode).toBe(0);

  const balance = await rpc<string>(stack.rpcUrl, "eth_getBalance", [stack.relayer.address, "latest"]);
  await rpc(stack.rpcUrl, "anvil_setBalance", [stack.relayer.address, "0x0"]);
  try {
    const refused = await stack.replay(op.id).then(() => null, (error: unknown) => error as { code?: string });
    expect(refused?.code).toBe("relayer_unfunded");
    const cli = await replayCli(op.id);
    expect(cli.exitCode, cli.stdout).toBe(125);
    expect(cli.stderr).toMatch(/^queue-devstack replay: 503 relayer_unfunded: /);
  } finally {
    await rpc(stack.rpcUrl, "anvil_setBalance", [stack.relayer.address, balance]);
  }
  expect((await replayCli(op.id)).exitCode).toBe(0);
});
