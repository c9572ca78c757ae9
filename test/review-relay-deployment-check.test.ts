import { describe, expect, it } from "vitest";
import { createChainClient } from "../src/chain/client.ts";
import { verifyDeployment } from "../src/chain/verify-deployment.ts";
import { rpc } from "./support/rpc.ts";
import { withStacks } from "./support/stacks.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

// The deployment check takes a contract's code hash from the node's eth_getProof when it names the hash
// expected. On a fork, anvil's proof of an upstream account names the upstream's code even after the
// account's code was replaced (anvil_setCode, a patch): the check must not take that for the code.
const tempDir = withTempDirs(); // first: its folders are removed after the stacks are stopped
const start = withStacks();

describe("the deployment check on a fork", () => {
  it("refuses a pinned Pool whose code was replaced on the fork, though the node's proof names the upstream's", async () => {
    const upstream = await start();
    const pinned = await start({ forkUrl: upstream.rpcUrl, pool: upstream.manifest.poolAddress, forkCacheDir: await tempDir("devstack-review-fork-cache-") });
    const client = createChainClient(pinned.rpcUrl);
    await expect(verifyDeployment(client, pinned.manifest)).resolves.toBeUndefined();

    // The Pool's own code and one byte past its end: it answers every call as before, with another hash.
    const pool = pinned.manifest.poolAddress;
    await rpc(pinned.rpcUrl, "anvil_setCode", [pool, `${await rpc<string>(pinned.rpcUrl, "eth_getCode", [pool, "latest"])}00`]);
    const proof = await rpc<{ codeHash: string }>(pinned.rpcUrl, "eth_getProof", [pool, [], "latest"]);
    expect(proof.codeHash).toBe(pinned.manifest.poolRuntimeCodeHash); // what makes this case: the proof is stale
    await expect(verifyDeployment(client, pinned.manifest)).rejects.toThrow(/the Pool's runtime code hash is 0x\w+, the manifest says/);
  });
});
