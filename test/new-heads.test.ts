import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, it } from "vitest";
import { startChain, type Chain } from "../harness/chain/index.ts";
import { subscribeNewHeads } from "../src/chain/new-heads.ts";
import { rpc } from "./support/rpc.ts";

// The newHeads subscription on a real anvil: heads arrive as blocks are mined, and after the node is
// killed and started again at the same address the subscription comes back by itself.
const chains: Chain[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(chains.map((c) => c.stop({ graceful: false })));
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function chainAt(port: number): Promise<Chain> {
  const stateDir = await mkdtemp(path.join(tmpdir(), "devstack-new-heads-"));
  dirs.push(stateDir);
  const chain = await startChain({ host: "127.0.0.1", port, stateDir });
  chains.push(chain);
  return chain;
}

const eventually = async (ok: () => boolean, what: string) => {
  for (let i = 0; !ok(); i++) {
    if (i > 200) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe("subscribeNewHeads", () => {
  it("follows new blocks, and resubscribes once a lost node is back", async () => {
    const first = await chainAt(0);
    const heads: bigint[] = [];
    const errors: Error[] = [];
    const subscription = subscribeNewHeads(first.rpcUrl.replace(/^http/, "ws"), (n) => heads.push(n), (e) => errors.push(e));
    try {
      // Mined until one is seen: the subscription may still be opening.
      await eventually(() => (void rpc(first.rpcUrl, "anvil_mine", ["0x1"]).catch(() => {}), heads.length > 0), "a first head");
      await first.stop({ graceful: false });
      await eventually(() => errors.length > 0, "the lost socket reported");

      const second = await chainAt(first.port);
      const before = heads.length;
      await eventually(() => (void rpc(second.rpcUrl, "anvil_mine", ["0x1"]).catch(() => {}), heads.length > before), "a head from the restarted node");
    } finally {
      await subscription.close();
    }
  });
});
