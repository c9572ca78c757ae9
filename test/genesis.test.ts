import { describe, expect, it } from "vitest";
import { loadCircuitManifest } from "../harness/deployment/index.ts";
import { loadFixtures } from "../harness/deployment/index.ts";
import { describeDeployment, manifestBytes } from "../harness/deployment/index.ts";
import { createChainClient } from "../src/chain/client.ts";
import { canonicalState, genesisFiles, genesisInputsHash, GENESIS_CODE, GENESIS_TIMESTAMP, loadGenesis } from "../harness/deployment/index.ts";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { withTempDirs } from "./support/temp-dirs.ts";
import { startDevStack } from "../harness/index.ts";
import { rpc } from "./support/rpc.ts";

// A local stack serves byte-identical configuration on every run and every machine (a client's reviewed
// deployment data can pin it), because it starts from the committed genesis.
const tempDir = withTempDirs();

describe("the prepared genesis", () => {
  it("is fresh for the committed contracts, real proofs' and dev proofs' (else: npm run build:genesis)", async () => {
    const fixtures = await loadFixtures();
    const { levels } = await loadCircuitManifest();
    expect(await loadGenesis(fixtures, levels, "groth16")).toBeDefined();
    expect(await loadGenesis(fixtures, levels, "dev")).toBeDefined();
  });

  it("is stale when the code that deploys the fixtures changes (a route approved with another kind), not only its parameters", async () => {
    const fixtures = await loadFixtures();
    const { levels } = await loadCircuitManifest();
    const deploy = GENESIS_CODE.find((url) => url.pathname.endsWith("/deploy.ts")) as URL;
    const text = await readFile(deploy, "utf8");
    const changed = text.replace("ROUTE_KIND.async]", "ROUTE_KIND.sync]");
    expect(changed).not.toBe(text);
    const copy = pathToFileURL(path.join(await tempDir("genesis-code-"), "deploy.ts"));
    await writeFile(copy, changed);
    const withCopy = GENESIS_CODE.map((url) => (url === deploy ? copy : url));
    expect(await genesisInputsHash(fixtures, levels, withCopy)).not.toBe(await genesisInputsHash(fixtures, levels));
  });

  it("is written the same, byte for byte, whatever order anvil lists accounts in (a rebuild reproduces the committed file)", async () => {
    expect(canonicalState(await readFile(genesisFiles("dev").state))).toBe((await readFile(genesisFiles("dev").state)).toString("utf8"));
    const committed = await readFile(genesisFiles("groth16").state);
    expect(canonicalState(committed)).toBe(committed.toString("utf8"));
    // The same state with every object's keys in reverse order, as anvil's hash maps may give them.
    const reversed = (value: unknown): unknown =>
      Array.isArray(value) ? value.map(reversed) : value !== null && typeof value === "object" ? Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reversed(v)])) : value;
    expect(canonicalState(Buffer.from(JSON.stringify(reversed(JSON.parse(committed.toString("utf8"))))))).toBe(committed.toString("utf8"));
  });

  it("gives two stacks, one after the other, the same manifest bytes; time then moves normally", async () => {
    const served: string[] = [];
    for (let run = 0; run < 2; run++) {
      const stack = await startDevStack();
      try {
        served.push(await (await fetch(`${stack.queueUrl}/api/queue/config`)).text());
        const deployed = await rpc<{ timestamp: string }>(stack.rpcUrl, "eth_getBlockByNumber", [`0x${stack.manifest.deploymentBlock.toString(16)}`, false]);
        expect(BigInt(deployed.timestamp)).toBeGreaterThan(GENESIS_TIMESTAMP);
        await rpc(stack.rpcUrl, "anvil_mine", ["0x1"]);
        const next = await rpc<{ timestamp: string }>(stack.rpcUrl, "eth_getBlockByNumber", ["latest", false]);
        expect(Math.abs(Number(next.timestamp) - Date.now() / 1000)).toBeLessThan(60);
      } finally {
        await stack.stop();
      }
    }
    expect(served[1]).toBe(served[0]);
  });

  it("comes with the manifest that describes it, which a stack serves without describing its chain again (else: npm run build:genesis)", async () => {
    const fixtures = await loadFixtures();
    const circuit = await loadCircuitManifest();
    for (const proofs of ["groth16", "dev"] as const) {
      const prepared = await readFile(genesisFiles(proofs).manifest);
      const steps: string[] = [];
      const stack = await startDevStack({ proofs, onProgress: ({ step, detail }) => void steps.push(`${step}: ${detail}`) });
      try {
        expect(steps).toContain("write manifest: the genesis's own, checked against the chain as the runtime starts");
        // Its runtime was built while anvil booted (issue 32, item 1), and checked before it listened.
        expect(steps).toContain("start queue runtime: built while anvil booted, checked against the chain before it listened");
        expect((await readFile(stack.manifestPath)).equals(prepared)).toBe(true);
        // What describing the stack's chain gives, byte for byte: the prepared file is not stale.
        const client = createChainClient(stack.rpcUrl);
        const described = await describeDeployment({ client, pool: stack.manifest.poolAddress, deploymentBlock: BigInt(stack.manifest.deploymentBlock), fixtures, circuit, relayer: stack.relayer.address });
        expect(Buffer.from(manifestBytes(described)).toString("utf8")).toBe(prepared.toString("utf8"));
      } finally {
        await stack.stop();
      }
    }
  });
});
