import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { keccak256, type Address } from "viem";
import { describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { createChainClient } from "../src/chain/client.ts";
import { VARIANTS_PATH } from "./support/patch-variants.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

// A patch's source is a path to anyone's file: whatever it holds, the answer is a named refusal (422), the
// chain's code unchanged; never a 500, and never a 503 blaming the chain for the file's content.
const tempDir = withTempDirs();

describe("a patch source that is not one", () => {
  let stack: DevStack;
  let dir: string;
  let variants: { contracts: Record<string, Record<string, { evm: { deployedBytecode: { object: string } }; storageLayout: { storage: unknown } }>> };
  withQueueStack({ client: false }, async (started) => {
    ({ stack } = started);
    dir = await tempDir("devstack-review-patch-");
    variants = JSON.parse(await readFile(VARIANTS_PATH, "utf8")) as typeof variants;
  });
  const fixed = (v: typeof variants) => v.contracts["contracts/test/PoolFixed.sol"]?.PoolFixed as (typeof variants.contracts)[string][string];
  const poolCode = async () => keccak256((await createChainClient(stack.rpcUrl).getCode({ address: stack.manifest.poolAddress as Address })) ?? "0x");
  const post = async (source: string) => {
    const response = await fetch(`${stack.queueUrl}/api/dev/patch`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ contract: "Pool", source }) });
    return { status: response.status, body: (await response.json()) as { code?: string; detail?: string } };
  };
  const write = async (name: string, content: unknown) => {
    const file = path.join(dir, name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, typeof content === "string" ? content : JSON.stringify(content));
    return file;
  };

  it.each([
    ["a folder named like a .sol file", async () => (await mkdir(path.join(dir, "Folder.sol"), { recursive: true }), path.join(dir, "Folder.sol")), /Folder\.sol: not a file/],
    ["JSON that is not an object", () => write("null.json", "null"), /not a JSON object/],
    [
      "compiler output whose storage layout is malformed",
      () => {
        const bad = structuredClone(variants);
        fixed(bad).storageLayout.storage = 5;
        return write("bad-layout.json", bad).then((file) => `${file}:PoolFixed`);
      },
      /bad-layout\.json/,
    ],
    ["an artifact whose build-info is not JSON", async () => (await write("build-info/x.output.json", "{not json"), write("artifacts/Pool.json", { contractName: "Pool", deployedBytecode: "0x00", buildInfoId: "x" })), /Pool\.json/],
    ["a Hardhat 2 artifact whose .dbg.json is not JSON", async () => (await write("h2/Pool.dbg.json", "nope"), write("h2/Pool.json", { contractName: "Pool", deployedBytecode: "0x00" })), /Pool\.json/],
    [
      "code with an unlinked library's placeholder",
      () => {
        const linked = structuredClone(variants);
        const object = fixed(variants).evm.deployedBytecode.object;
        fixed(linked).evm.deployedBytecode.object = `${object.slice(0, 200)}__$0123456789abcdef0123456789abcdef01$__${object.slice(240)}`;
        return write("linked.json", linked).then((file) => `${file}:PoolFixed`);
      },
      /PoolFixed's code is not linked/,
    ],
  ])("%s: 422 patch_source_invalid, the chain's code unchanged", async (_name, make, detail) => {
    const before = await poolCode();
    const answer = await post(await make());
    expect(answer).toMatchObject({ status: 422, body: { code: "patch_source_invalid", detail: expect.stringMatching(detail) } });
    expect(await poolCode()).toBe(before);
  });

  // The runtime checks the patched chain as at its start: a verifier that takes dev proofs where the
  // manifest says Groth16 is refused there. That refusal was thrown as it came: a 500.
  it("a verifier patch the runtime refuses (another proof system): 422 deployment_mismatch, the verifier's code and the manifest unchanged", async () => {
    const verifier = stack.manifest.queue.proof.verifier;
    const codeOf = async () => keccak256((await createChainClient(stack.rpcUrl).getCode({ address: verifier.address as Address })) ?? "0x");
    const before = { code: await codeOf(), manifest: verifier.runtimeCodeHash, etag: (await fetch(`${stack.queueUrl}/api/queue/config`)).headers.get("etag") };
    const other = stack.manifest.queue.proof.system === "dev" ? "JoinSplitVerifier.sol" : "DevVerifier.sol";
    const source = await write("verifier/package.json", "{}").then(() => path.join(dir, "verifier", other));
    await copyFile(path.resolve("contracts-fixtures/contracts", other), source);
    const response = await fetch(`${stack.queueUrl}/api/dev/patch`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ contract: "verifier", source }) });
    expect({ status: response.status, body: await response.json() }).toMatchObject({ status: 422, body: { code: "deployment_mismatch", detail: expect.stringMatching(/the Pool's verifier expects/) } });
    expect({ code: await codeOf(), manifest: verifier.runtimeCodeHash, etag: (await fetch(`${stack.queueUrl}/api/queue/config`)).headers.get("etag") }).toEqual(before);
    expect(stack.patches()).toEqual([]);
  });

  // Found by the reset property test (issue 40): with a dev RPC fault on, the runtime's check of the
  // patched chain cannot reach it, and that was thrown as it came: a 500.
  it("a patch while the runtime's RPC fails: 503 chain_unavailable, the Pool's code unchanged; it goes through once the fault is off", async () => {
    const before = await poolCode();
    stack.faults.rpc({ kind: "fail" });
    try {
      expect(await post(`${VARIANTS_PATH}:PoolFixed`)).toMatchObject({ status: 503, body: { code: "chain_unavailable" } });
    } finally {
      stack.faults.rpc(null);
    }
    expect(await poolCode()).toBe(before);
    expect(stack.patches()).toEqual([]);
    expect((await post(`${VARIANTS_PATH}:PoolFixed`)).status).toBe(200);
    await stack.unpatch("Pool");
  });
});
