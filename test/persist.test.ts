import { access, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { erc20Abi, parseAbi, type Hex } from "viem";
import { startDevStack } from "../harness/index.ts";
import { closeProvers, createAccountKeys, createQueueClient, recipientOf, reviewedFrom } from "../harness/client/index.ts";
import { clients } from "./support/chain.ts";
import { poolFixture } from "./support/pool.ts";
import { hex, rpc } from "./support/rpc.ts";
import { withStacks } from "./support/stacks.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

// Save a stack and reload it, as a developer reproducing a bug would: same blocks, same Pool, same
// manifest, same relayed operations.
const tempDir = withTempDirs();
const startStack = withStacks();
afterAll(closeProvers);

describe("a persisted stack", () => {
  it("is saved on stop and resumed on start", async () => {
    const stateDir = await tempDir("devstack-persist-");
    const first = await startStack({ stateDir, persist: true });
    expect(first.info.chainState).toBe(path.join(stateDir, "chain-state.json"));

    // Some history: a relayed private send and a token mint to the Pool.
    const pool = await poolFixture(first);
    const keys = createAccountKeys();
    const { state, input } = await pool.fundedNote(2, keys, pool.usdc("5"));
    const fee = BigInt(first.manifest.relayFees.fees[0]?.send ?? "0");
    const { transaction } = await pool.prove({ tree: state.tree, keys, inputs: [input], outputs: [{ amount: pool.usdc("5") - fee, to: recipientOf(keys) }], fee, relayer: first.relayer.address });
    const queue = createQueueClient({ baseUrl: first.queueUrl, reviewed: reviewedFrom(first.manifest) });
    const op = await queue.waitFor("send", (await queue.submit("send", first.manifest, transaction)).id);
    expect(op.state).toBe("confirmed");
    const { wallet, public: client } = clients(first.rpcUrl, first.accounts[3]?.privateKey as Hex);
    await client.waitForTransactionReceipt({
      hash: await wallet.writeContract({ address: pool.asset, abi: parseAbi(["function mint(address,uint256)"]), functionName: "mint", args: [first.manifest.poolAddress, 777n] }),
    });
    const head = Number(await rpc<string>(first.rpcUrl, "eth_blockNumber"));
    const headHash = (await rpc<{ hash: string }>(first.rpcUrl, "eth_getBlockByNumber", [hex(head), false])).hash;
    const poolBalance = await client.readContract({ address: pool.asset, abi: erc20Abi, functionName: "balanceOf", args: [first.manifest.poolAddress] });
    const manifest = await readFile(first.manifestPath);
    await first.stop();
    await access(path.join(stateDir, "chain-state.json"));

    const second = await startStack({ stateDir, persist: true });
    expect((await readFile(second.manifestPath)).equals(manifest)).toBe(true);
    expect((await rpc<{ hash: string }>(second.rpcUrl, "eth_getBlockByNumber", [hex(head), false])).hash).toBe(headHash);
    const client2 = clients(second.rpcUrl, second.accounts[3]?.privateKey as Hex).public;
    expect(await client2.readContract({ address: pool.asset, abi: erc20Abi, functionName: "balanceOf", args: [second.manifest.poolAddress] })).toBe(poolBalance);
    // The queue still knows the operation relayed before the save.
    const again = createQueueClient({ baseUrl: second.queueUrl, reviewed: reviewedFrom(second.manifest) });
    expect(await again.status("send", op.id)).toMatchObject({ id: op.id, state: "confirmed", transactionHash: op.transactionHash });
  });

  it("needs a state dir and a local chain", async () => {
    await expect(startDevStack({ persist: true })).rejects.toThrow(/needs a stateDir/);
  });
});
