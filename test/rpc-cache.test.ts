import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openRpcCache, type RpcCache } from "../harness/chain/index.ts";

// The cache's rules for eth_getLogs, call by call; test/fork.test.ts replays a pinned fork through it.
const POOL = "0xa513E6E4b8f2a923D98304ec87F64353C4D5C853";
const [APPROVED, REVOKED] = ["0xEAFFA10C02FBD002155B89D51B775AB69B732F366CBDC035C4F4281F3699553A", "0x6b89e52c0fb831a92ce3b7317e660a14b814ef5ba2448a43abf058d0fcab0623"];
const logs = (filter: Record<string, unknown>) => ({ method: "eth_getLogs", params: [filter] });
const answer = [{ address: POOL.toLowerCase(), topics: [APPROVED.toLowerCase()], data: "0x", blockNumber: "0x2" }];

let dir: string;
let cache: RpcCache;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "devstack-rpc-cache-"));
  cache = await openRpcCache(dir, "http://upstream.example/");
  cache.put({ method: "eth_getBlockByNumber", params: ["0x5", false] }, { number: "0x5", hash: `0x${"ab".repeat(32)}` });
});
afterEach(async () => {
  await cache.flush();
  await rm(dir, { recursive: true, force: true });
});

describe("the fork RPC cache's logs", () => {
  it("keeps a range of past blocks, and answers it however the same filter is written (anvil lists a topic's alternatives in any order)", async () => {
    cache.put(logs({ fromBlock: "0x1", toBlock: "0x5", address: POOL.toLowerCase(), topics: [[APPROVED, REVOKED]] }), answer);
    expect(cache.get(logs({ address: POOL, topics: [[REVOKED.toUpperCase().replace("0X", "0x"), APPROVED.toLowerCase()], null], fromBlock: "0x01", toBlock: "0x5" }))).toEqual(answer);
    // Written to disk: the next run finds it.
    await cache.flush();
    const reopened = await openRpcCache(dir, "http://upstream.example/");
    expect(reopened.get(logs({ fromBlock: "0x1", toBlock: "0x5", address: POOL, topics: [[REVOKED, APPROVED]] }))).toEqual(answer);
    // Another range, address or topic is another question.
    expect(cache.get(logs({ fromBlock: "0x1", toBlock: "0x4", address: POOL, topics: [[APPROVED, REVOKED]] }))).toBeUndefined();
    expect(cache.get(logs({ fromBlock: "0x1", toBlock: "0x5", address: POOL, topics: [[APPROVED]] }))).toBeUndefined();
  });

  it("never keeps a range that ends at a tag, has no end, or ends past every block the upstream has shown", () => {
    for (const filter of [
      { fromBlock: "0x1", toBlock: "latest", address: POOL },
      { fromBlock: "0x1", toBlock: "finalized", address: POOL },
      { fromBlock: "0x1", address: POOL },
      { fromBlock: "0x1", toBlock: "0x6", address: POOL }, // block 6 may not exist upstream yet: its logs could still grow
    ]) {
      cache.put(logs(filter), answer);
      expect(cache.get(logs(filter))).toBeUndefined();
    }
  });

  it("keeps the logs of a block named by hash", () => {
    const byHash = logs({ blockHash: `0x${"cd".repeat(32)}`, address: POOL });
    cache.put(byHash, answer);
    expect(cache.get(byHash)).toEqual(answer);
  });
});
