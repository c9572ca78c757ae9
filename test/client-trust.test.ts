import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as snarkjs from "snarkjs";
import { afterAll, describe, expect, it } from "vitest";
import type { Address } from "viem";
import { loadCircuitManifest } from "../harness/deployment/index.ts";
import type { DevStack } from "../harness/index.ts";
import {
  ArtifactIntegrityError,
  buildWitness,
  closeProvers,
  commitmentOf,
  ConfigMismatchError,
  createAccountKeys,
  createProver,
  createQueueClient,
  fetchProofFiles,
  MerkleTree,
  prepareTransaction,
  ProofVerificationError,
  randomFieldElement,
  recipientOf,
  ReviewedDeploymentError,
  reviewedFrom,
  sha256Of,
  type Note,
  type ProofFiles,
  type Prover,
  type ReviewedDeployment,
  type TransactionRequest,
} from "../harness/client/index.ts";
import type { DeploymentConfig } from "../src/config/deployment-config.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// Spec rule 6 for the proof files: the client proves only with the files it reviewed, and returns (so
// sends) only proofs that its pinned verification key accepts. The queues here are small local HTTP
// servers started by the test, serving what a hostile or broken operator could serve.
let stack: DevStack;
let reviewed: ReviewedDeployment;
let honest: ProofFiles;
let request: TransactionRequest;
const servers: Server[] = [];

withQueueStack({ client: false }, async (started) => {
  ({ stack } = started);
  reviewed = reviewedFrom(stack.manifest);
  honest = await fetchProofFiles(stack.queueUrl, stack.manifest, reviewed);
  // A send of two notes in a local tree: proving needs no chain.
  const keys = createAccountKeys();
  const asset = stack.manifest.assets[0]?.address as Address;
  const tree = new MerkleTree(stack.manifest.queue.proof.treeDepth);
  const notes: Note[] = [30n, 12n].map((amount) => ({ amount, asset, ownerPublicKey: keys.notePublicKey, blinding: randomFieldElement() }));
  notes.forEach((note, i) => tree.insert(i, commitmentOf(note)));
  request = {
    deployment: { chainId: stack.manifest.chainId, poolAddress: stack.manifest.poolAddress, domain: BigInt(stack.manifest.domain) },
    tree,
    keys,
    asset,
    inputs: notes.map((note, i) => ({ note, leafIndex: i })),
    outputs: [{ amount: 42n, to: recipientOf(createAccountKeys()) }],
  };
});
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A queue on 127.0.0.1 serving `config` and the given artifact bytes by name; it records every request. */
async function queueServing(config: DeploymentConfig, files: Record<string, Uint8Array>) {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const { pathname } = new URL(req.url ?? "/", "http://queue");
    requests.push(`${req.method} ${pathname}`);
    const artifact = config.queue.proof.artifacts.find((a) => a.path === pathname);
    if (req.method === "GET" && pathname === "/api/queue/config") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(config));
    } else if (req.method === "GET" && artifact && files[artifact.name]) {
      res.writeHead(200, { "content-type": artifact.contentType }).end(files[artifact.name]);
    } else {
      res.writeHead(404, { "content-type": "application/problem+json" }).end(JSON.stringify({ status: 404, code: "route_not_found" }));
    }
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

/** The config with some proof files replaced, listed with their own (self-consistent) hashes and sizes. */
function configListing(replaced: Partial<Record<"wasm" | "zkey" | "verificationKey", Uint8Array>>): DeploymentConfig {
  const config = structuredClone(stack.manifest);
  for (const artifact of config.queue.proof.artifacts) {
    const bytes = replaced[artifact.role];
    if (!bytes) continue;
    artifact.sha256 = sha256Of(bytes);
    artifact.size = bytes.length;
    if (artifact.role === "verificationKey") config.queue.proof.verificationKeySha256 = artifact.sha256;
  }
  return config;
}

const nameOf = (role: string) => stack.manifest.queue.proof.artifacts.find((a) => a.role === role)?.name as string;
const flipped = (bytes: Uint8Array, at: number) => {
  const copy = new Uint8Array(bytes);
  copy[at] = (copy[at] as number) ^ 1;
  return copy;
};

describe("the reviewed deployment data", () => {
  it("pins the sha256 of the wasm, the zkey and the verification key, as the circuit build lists them", async () => {
    const circuit = await loadCircuitManifest();
    const built = (file: string) => `0x${circuit.files.find((f) => f.file === file)?.sha256}`;
    expect(reviewed).toMatchObject({
      wasmSha256: built("joinsplit.wasm"),
      zkeySha256: built("joinsplit_final.zkey"),
      verificationKeySha256: built("verification_key.json"),
      domain: stack.manifest.domain,
    });
  });

  it("is refused without a domain or a proof-file pin (and does not type-check)", () => {
    const { domain: _domain, ...withoutDomain } = reviewed;
    // @ts-expect-error the domain is required
    expect(() => createQueueClient({ baseUrl: stack.queueUrl, reviewed: withoutDomain })).toThrow(ReviewedDeploymentError);
    const { zkeySha256: _zkey, ...withoutZkey } = reviewed;
    // @ts-expect-error every proof file is pinned
    expect(() => createQueueClient({ baseUrl: stack.queueUrl, reviewed: withoutZkey })).toThrow(/zkeySha256/);
  });
});

describe("a hostile queue", () => {
  it("serving another wasm and zkey, listed with their own hashes, is refused before any proof is made", async () => {
    const doctored = { wasm: flipped(honest.wasm, 1000), zkey: flipped(honest.zkey, 5000) };
    const config = configListing(doctored);
    const hostile = await queueServing(config, { [nameOf("wasm")]: doctored.wasm, [nameOf("zkey")]: doctored.zkey, [nameOf("verificationKey")]: honest.verificationKey });

    const queue = createQueueClient({ baseUrl: hostile.url, reviewed });
    const mismatch = await queue.beforePrepare().catch((e: unknown) => e);
    expect(mismatch).toBeInstanceOf(ConfigMismatchError);
    expect((mismatch as ConfigMismatchError).differences.map((d) => d.split(":")[0])).toEqual(["wasmSha256", "zkeySha256"]);

    // Skipping the config check does not help: the files are checked against the reviewed pins,
    // before anything is downloaded.
    await expect(queue.proofFiles(config)).rejects.toThrow(ArtifactIntegrityError);
    await expect(fetchProofFiles(hostile.url, config, reviewed)).rejects.toThrow(/joinsplit.wasm: the config lists sha256 0x[0-9a-f]{64}, the reviewed pin is/);
    expect(hostile.requests.filter((r) => r.includes("/artifacts/"))).toEqual([]);
    // Listed under the reviewed hashes, the doctored bytes are refused as they arrive.
    await expect(fetchProofFiles(hostile.url, stack.manifest, reviewed)).rejects.toThrow(/joinsplit.wasm: got \d+ bytes with sha256/);
    // And no prover is made from them, whoever downloaded them.
    expect(() => createProver({ ...honest, ...doctored }, reviewed)).toThrow(ArtifactIntegrityError);
    expect(hostile.requests.filter((r) => r.startsWith("POST"))).toEqual([]);
  });
});

describe("local verification", () => {
  it("a proof the pinned verification key does not accept is never returned, so never sent", async () => {
    // A verification key of valid curve points in the wrong places (IC[0] and IC[1] swapped): the
    // reviewed zkey's proofs do not verify with it. Reviewed and served consistently.
    const vk = JSON.parse(Buffer.from(honest.verificationKey).toString("utf8")) as { IC: unknown[] };
    const swapped = new Uint8Array(Buffer.from(JSON.stringify({ ...vk, IC: [vk.IC[1], vk.IC[0], ...vk.IC.slice(2)] })));
    const config = configListing({ verificationKey: swapped });
    const pins = { ...reviewed, verificationKeySha256: sha256Of(swapped) };
    const queue = await queueServing(config, { [nameOf("wasm")]: honest.wasm, [nameOf("zkey")]: honest.zkey, [nameOf("verificationKey")]: swapped });
    const client = createQueueClient({ baseUrl: queue.url, reviewed: pins });

    const served = await client.beforePrepare();
    const prover = createProver(await client.proofFiles(served), client.reviewed);
    const sent = prepareTransaction({ ...request, prover }).then(({ transaction }) => client.submit("send", served, transaction));
    await expect(sent).rejects.toThrow(ProofVerificationError);
    expect(queue.requests.filter((r) => r.startsWith("POST"))).toEqual([]);

    // The same request with the reviewed key proves and verifies: the key is the only difference.
    const { transaction } = await prepareTransaction({ ...request, prover: createProver(honest, reviewed) });
    expect(transaction.publicInputs.root).toBe(request.tree.root);
  });

  it("a prover's proof of other public inputs is not returned", async () => {
    const real = createProver(honest, reviewed);
    const other = await real.prove(buildWitness({ ...request, outputs: [{ amount: 41n, to: recipientOf(request.keys) }, { amount: 1n, to: recipientOf(request.keys) }] }).signals);
    const vk = JSON.parse(Buffer.from(honest.verificationKey).toString("utf8"));
    const snark = {
      pi_a: [...other.proof.a.map(String), "1"],
      pi_b: [[String(other.proof.b[0][1]), String(other.proof.b[0][0])], [String(other.proof.b[1][1]), String(other.proof.b[1][0])], ["1", "0"]],
      pi_c: [...other.proof.c.map(String), "1"],
      protocol: "groth16",
      curve: "bn128",
    };
    expect(await snarkjs.groth16.verify(vk, other.publicSignals.map(String), snark)).toBe(true); // a valid proof, of something else
    const replaying: Prover = { prove: async () => other, close: closeProvers };
    await expect(prepareTransaction({ ...request, prover: replaying })).rejects.toThrow(ProofVerificationError);
  });
});
