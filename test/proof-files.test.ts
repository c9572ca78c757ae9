import { createHash } from "node:crypto";
import { cp, open, readFile, rename, stat, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import * as snarkjs from "snarkjs";
import { describe, expect, it } from "vitest";
import { keccak256, toFunctionSignature, type Abi, type AbiFunction, type Hex } from "viem";
import { CIRCUIT_BUILD_DIR, loadCircuitManifest, renderSolidityVerifier } from "../harness/deployment/index.ts";
import { FIXTURES_DIR, loadFixtures } from "../harness/deployment/index.ts";
import { startDevStack, type DevStack } from "../harness/index.ts";
import { ArtifactIntegrityError, fetchProofFiles, hashExtData, poolAbi, randomFieldElement, reviewedFrom } from "../harness/client/index.ts";
import { adapterErrorsAbi } from "../src/chain/abi.ts";
import { buildQueueRuntime } from "../src/server.ts";
import { forgetProofHashes, knownProofHashes, rememberProofHashes } from "../src/proof-artifacts.ts";
import { clients, RELAYER_KEY } from "./support/chain.ts";
import { withTempDirs } from "./support/temp-dirs.ts";
import { withQueueStack } from "./support/queue-stack.ts";

const tempDir = withTempDirs();
let stack: DevStack;
withQueueStack({ client: false }, (started) => ({ stack } = started));

const sha256 = (bytes: Uint8Array) => `0x${createHash("sha256").update(bytes).digest("hex")}`;

describe("the committed proof files", () => {
  it("the Solidity verifier is the one the committed zkey generates", async () => {
    const circuit = await loadCircuitManifest();
    const zkey = path.join(CIRCUIT_BUILD_DIR, "joinsplit_final.zkey");
    const committed = await readFile(path.join(FIXTURES_DIR, "contracts", "JoinSplitVerifier.sol"), "utf8");
    expect(await renderSolidityVerifier(zkey, circuit.levels, circuit.publicInputs)).toBe(committed);
    const vk = await snarkjs.zKey.exportVerificationKey(zkey);
    expect(vk).toEqual(JSON.parse(await readFile(path.join(CIRCUIT_BUILD_DIR, "verification_key.json"), "utf8")));
  }, 60_000);

  it("the circuit manifest's hashes and sizes are the files'", async () => {
    const circuit = await loadCircuitManifest();
    expect(circuit.files.map((f) => f.file).sort()).toEqual(["joinsplit.wasm", "joinsplit_final.zkey", "verification_key.json"]);
    for (const file of circuit.files) {
      const bytes = await readFile(path.join(CIRCUIT_BUILD_DIR, file.file));
      expect(sha256(bytes)).toBe(`0x${file.sha256}`);
      expect(bytes.length).toBe(file.bytes);
    }
  });
});

describe("the queue serves the proof files", () => {
  it("as the config lists them: hash, size, content type, ETag, immutable caching", async () => {
    for (const artifact of stack.manifest.queue.proof.artifacts) {
      const response = await fetch(`${stack.queueUrl}${artifact.path}`);
      expect(response.status).toBe(200);
      const bytes = new Uint8Array(await response.arrayBuffer());
      expect(sha256(bytes)).toBe(artifact.sha256);
      expect(bytes.length).toBe(artifact.size);
      expect(response.headers.get("content-type")).toContain(artifact.contentType);
      expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      const etag = response.headers.get("etag") as string;
      expect(etag).toBe(`"${artifact.sha256.slice(2)}"`);
      expect((await fetch(`${stack.queueUrl}${artifact.path}`, { headers: { "if-none-match": etag } })).status).toBe(304);
    }
    const vk = stack.manifest.queue.proof.artifacts.find((a) => a.role === "verificationKey");
    expect(stack.manifest.queue.proof.verificationKeySha256).toBe(vk?.sha256);
  });

  it("names the verifier the Pool really uses, with its code hash", async () => {
    const { verifier } = stack.manifest.queue.proof;
    const client = clients(stack.rpcUrl, stack.accounts[0]?.privateKey as Hex).public;
    expect(await client.readContract({ address: stack.manifest.poolAddress, abi: [{ type: "function", name: "verifier", inputs: [], outputs: [{ type: "address" }], stateMutability: "view" }], functionName: "verifier" })).toBe(verifier.address);
    expect(keccak256((await client.getCode({ address: verifier.address })) as Hex)).toBe(verifier.runtimeCodeHash);
  });

  it("a missing artifact is a 404 problem", async () => {
    const response = await fetch(`${stack.queueUrl}/api/queue/artifacts/other.zkey`);
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(((await response.json()) as { code: string }).code).toBe("artifact_not_found");
  });

  it("the client refuses a tampered file", async () => {
    const tampering: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!String(input).endsWith(".zkey")) return response;
      const bytes = new Uint8Array(await response.arrayBuffer());
      bytes[1000] = (bytes[1000] as number) ^ 1;
      return new Response(bytes, { status: 200 });
    };
    const reviewed = reviewedFrom(stack.manifest);
    await expect(fetchProofFiles(stack.queueUrl, stack.manifest, reviewed, tampering)).rejects.toBeInstanceOf(ArtifactIntegrityError);
    await expect(fetchProofFiles(stack.queueUrl, stack.manifest, reviewed, tampering)).rejects.toThrow(/joinsplit_final.zkey: got 9\d+ bytes with sha256/);
    const files = await fetchProofFiles(stack.queueUrl, stack.manifest, reviewed);
    expect(files.zkey.length).toBeGreaterThan(0);
  });

  it("serves the files it checked at start: a file replaced since is not served, one written to in place is refused", async () => {
    // Served from the files opened and checked at start, not from 12 MB held by every idle runtime.
    const dir = await tempDir("artifacts-");
    await cp(CIRCUIT_BUILD_DIR, dir, { recursive: true });
    const app = await buildQueueRuntime({ manifest: await readFile(stack.manifestPath), rpcUrl: stack.rpcUrl, artifactsDir: dir, relayerPrivateKey: RELAYER_KEY, store: ":memory:" });
    try {
      const wasm = stack.manifest.queue.proof.artifacts.find((a) => a.role === "wasm");
      const zkey = stack.manifest.queue.proof.artifacts.find((a) => a.role === "zkey");
      if (!wasm || !zkey) throw new Error("no wasm or zkey artifact");
      // A rebuild writes a new file in its place: what was checked is still what is served.
      await writeFile(path.join(dir, "replaced.tmp"), Buffer.alloc(wasm.size, 7));
      await rename(path.join(dir, wasm.name), path.join(dir, `${wasm.name}.old`));
      await rename(path.join(dir, "replaced.tmp"), path.join(dir, wasm.name));
      for (let i = 0; i < 2; i++) {
        const served = await app.inject({ method: "GET", url: wasm.path });
        expect(served.statusCode).toBe(200);
        expect(served.headers["content-length"]).toBe(String(wasm.size));
        expect(sha256(served.rawPayload)).toBe(wasm.sha256);
      }
      // The same file written to in place no longer holds the checked bytes: refused, never served.
      const handle = await open(path.join(dir, zkey.name), "r+");
      await handle.write(Buffer.from([0xff]), 0, 1, 1000);
      await handle.close();
      const refused = await app.inject({ method: "GET", url: zkey.path });
      expect(refused.statusCode).toBe(404);
      expect(refused.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(refused.json()).toMatchObject({ code: "artifact_not_found", detail: expect.stringMatching(/written to since the runtime checked it/) });
    } finally {
      await app.close();
    }
  });

  it("the runtime refuses to start when a file differs from the manifest", async () => {
    const dir = await tempDir("artifacts-");
    await cp(CIRCUIT_BUILD_DIR, dir, { recursive: true });
    const wasm = path.join(dir, "joinsplit.wasm");
    const bytes = await readFile(wasm);
    bytes[10] = (bytes[10] as number) ^ 1;
    await writeFile(wasm, bytes);
    await expect(
      buildQueueRuntime({ manifest: await readFile(stack.manifestPath), rpcUrl: stack.rpcUrl, artifactsDir: dir, relayerPrivateKey: RELAYER_KEY, skipDeploymentCheck: true }),
    ).rejects.toThrow(/joinsplit.wasm is \d+ bytes with sha256/);
  });

  it("hashes kept across launches (by file identity, as git's index) are used only while a file is unchanged: an edited file is hashed again and refused", async () => {
    const dir = await tempDir("artifacts-");
    await cp(CIRCUIT_BUILD_DIR, dir, { recursive: true });
    const wasm = path.join(dir, "joinsplit.wasm");
    const key = async () => {
      const s = await stat(wasm, { bigint: true });
      return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
    };
    const build = async () => (await buildQueueRuntime({ manifest: await readFile(stack.manifestPath), rpcUrl: stack.rpcUrl, artifactsDir: dir, relayerPrivateKey: RELAYER_KEY, skipDeploymentCheck: true })).close();
    const listed = stack.manifest.queue.proof.artifacts.find((a) => a.name === "joinsplit.wasm")?.sha256 as string;
    // A file changed just before it was hashed is not kept (a write in the same timestamp tick could follow unseen).
    await build();
    expect(Object.keys(knownProofHashes())).not.toContain(await key());
    // An earlier launch's hash is what the check uses for a file of that identity (a wrong one, an edited
    // cache's, is not taken: the file is hashed, and the start goes on)...
    forgetProofHashes();
    rememberProofHashes({ [await key()]: `0x${"ab".repeat(32)}` });
    await build();
    forgetProofHashes();
    rememberProofHashes({ [await key()]: listed });
    await build();
    // ...until the file is edited in place, same size, its modification time put back: its change time
    // moved, so it is hashed again, and refused as in a new process.
    const before = await stat(wasm);
    const bytes = await readFile(wasm);
    bytes[10] = (bytes[10] as number) ^ 1;
    await writeFile(wasm, bytes);
    await utimes(wasm, before.atime, before.mtime);
    await expect(build()).rejects.toThrow(/joinsplit.wasm is \d+ bytes with sha256 0x(?!abab)/);
    forgetProofHashes();
  });

  it("a stack started from a state dir of the caller's keeps the proof files' hashes there for the next launch", async () => {
    const stateDir = await tempDir("state-");
    const started = await startDevStack({ stateDir });
    await started.stop();
    const kept = JSON.parse(await readFile(path.join(stateDir, "proof-hashes.json"), "utf8")) as Record<string, string>;
    const circuit = await loadCircuitManifest();
    for (const file of circuit.files) {
      const s = await stat(path.join(CIRCUIT_BUILD_DIR, file.file), { bigint: true });
      expect(kept[`${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`]).toBe(`0x${file.sha256}`);
    }
  });
});

describe("the client library agrees with the Pool", () => {
  it("every function, event and error of its ABI is the compiled Pool's", async () => {
    const { contracts } = await loadFixtures();
    const compiled = new Set(contracts.Pool.abi.filter((i) => i.type !== "constructor").map((i) => toFunctionSignature(i as AbiFunction)));
    for (const item of poolAbi) expect(compiled, toFunctionSignature(item as AbiFunction)).toContain(toFunctionSignature(item as AbiFunction));
  });

  it("every adapter error the runtime decodes is one a compiled fixture raises", async () => {
    const { contracts } = await loadFixtures();
    type AbiError = Extract<Abi[number], { type: "error" }>;
    const signature = (error: AbiError) => `${error.name}(${error.inputs.map((i) => i.type).join(",")})`;
    const compiled = new Set(Object.values(contracts).flatMap((c) => c.abi.filter((i): i is AbiError => i.type === "error").map(signature)));
    for (const error of adapterErrorsAbi) expect(compiled).toContain(signature(error));
  });

  it("computes extDataHash exactly as Pool.hashExtData", async () => {
    const client = clients(stack.rpcUrl, stack.accounts[0]?.privateKey as Hex).public;
    const deployment = { chainId: stack.manifest.chainId, poolAddress: stack.manifest.poolAddress, domain: BigInt(stack.manifest.domain) };
    const asset = stack.manifest.assets[1]?.address as Hex;
    for (const extAmount of [0n, -123456789n]) {
      const ext = {
        recipient: stack.accounts[2]?.address as Hex,
        extAmount,
        relayer: stack.relayer.address,
        fee: randomFieldElement() % 10n ** 20n,
        encryptedOutput1: `0x${"ab".repeat(100)}` as Hex,
        encryptedOutput2: "0x" as Hex,
      };
      const onChain = await client.readContract({ address: deployment.poolAddress, abi: poolAbi, functionName: "hashExtData", args: [ext, asset] });
      expect(hashExtData(deployment, asset, ext)).toBe(onChain);
    }
  });
});
