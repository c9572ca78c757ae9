import { readFile } from "node:fs/promises";
import { keccak256, parseAbi, type Address, type Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  closeProvers,
  createAccountKeys,
  createProver,
  createQueueClient,
  DEV_PROOF_TAG,
  devProof,
  fetchProofFiles,
  ProofSystemMismatchError,
  prepareTransaction,
  QueueProblemError,
  recipientOf,
  reviewedFrom,
  WitnessConstraintError,
} from "../harness/client/index.ts";
import { PROOFS_VARIABLE, type DevStack } from "../harness/index.ts";
import { verifyDeployment } from "../src/chain/verify-deployment.ts";
import { createChainClient } from "../src/chain/client.ts";
import { poolFixture } from "./support/pool.ts";
import { withStacks } from "./support/stacks.ts";
import { withTempDirs } from "./support/temp-dirs.ts";
import { stackEnvironment } from "../harness/exec/index.ts";
import { rpc } from "./support/rpc.ts";

// Dev proofs (issue 31): the same stack, verified by DevVerifier, and a client that computes the full
// witness but proves nothing. A dev proof can never pass the real verifier: shown on its contract.
const verifierAbi = parseAbi([
  "function verifyProof(uint256[2] a, uint256[2][2] b, uint256[2] c, uint256[9] publicSignals) view returns (bool)",
  "function DEV_PROOF_TAG() view returns (uint256)",
]);
/** The BN254 base field modulus: no curve coordinate reaches it. */
const Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;
const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

/** docs/fast-tests.md's example of a broken constraint, as its prose gives it: `template …, line N`. */
async function fastTestsExample(): Promise<string> {
  const example = /a `WitnessConstraintError` naming the template and line, for example `(template \w+, line \d+)`/.exec(await readFile("docs/fast-tests.md", "utf8"))?.[1];
  if (example === undefined) throw new Error("docs/fast-tests.md no longer gives an example of a broken constraint's template and line");
  return example;
}

const tempDir = withTempDirs();
const start = withStacks();
let dev: DevStack;
let real: DevStack;
beforeAll(async () => {
  [dev, real] = await Promise.all([start({ proofs: "dev", store: ":memory:" }), start({ proofs: "groth16", store: ":memory:" })]);
}, 120_000);
afterAll(closeProvers);

const verify = (stack: DevStack, proof: ReturnType<typeof devProof>, signals: readonly bigint[], verifier = stack.manifest.queue.proof.verifier.address as Address) =>
  createChainClient(stack.rpcUrl).readContract({ address: verifier, abi: verifierAbi, functionName: "verifyProof", args: [proof.a, proof.b, proof.c, signals as never] });
const signals = Array.from({ length: 9 }, (_, i) => BigInt(keccak256(`0x0${i}`)) % R);

describe("a dev proof on chain", () => {
  it("is refused by the real Groth16 verifier contract, even when made for its address and chain: its tag is no curve coordinate", async () => {
    expect(real.manifest.queue.proof.system).toBe("groth16");
    const verifier = real.manifest.queue.proof.verifier.address as Address;
    expect(DEV_PROOF_TAG >= Q).toBe(true);
    for (const publicSignals of [signals, Array<bigint>(9).fill(0n)]) {
      const proof = devProof({ verifier, chainId: real.manifest.chainId, publicSignals });
      expect(await verify(real, proof, publicSignals)).toBe(false);
    }
  });

  it("is accepted by DevVerifier only with its tag, zero b and c, and a hash of its own address, the chain id and every public input in order", async () => {
    expect(dev.manifest.queue.proof.system).toBe("dev");
    const verifier = dev.manifest.queue.proof.verifier.address as Address;
    const client = createChainClient(dev.rpcUrl);
    expect(await client.readContract({ address: verifier, abi: verifierAbi, functionName: "DEV_PROOF_TAG" })).toBe(DEV_PROOF_TAG);
    const proof = devProof({ verifier, chainId: dev.manifest.chainId, publicSignals: signals });
    expect(await verify(dev, proof, signals)).toBe(true);
    for (let i = 0; i < 9; i++) {
      const changed = signals.map((x, k) => (k === i ? x + 1n : x));
      expect(await verify(dev, proof, changed), `public input ${i} changed`).toBe(false);
    }
    const swapped = [signals[1], signals[0], ...signals.slice(2)] as bigint[];
    expect(await verify(dev, proof, swapped), "inputs in another order").toBe(false);
    expect(await verify(dev, devProof({ verifier: real.manifest.poolAddress as Address, chainId: dev.manifest.chainId, publicSignals: signals }), signals), "another verifier's").toBe(false);
    expect(await verify(dev, devProof({ verifier, chainId: 1, publicSignals: signals }), signals), "another chain's").toBe(false);
    expect(await verify(dev, { ...proof, c: [1n, 0n] }, signals), "c not zero").toBe(false);
    expect(await verify(dev, { ...proof, b: [[0n, 0n], [0n, 1n]] }, signals), "b not zero").toBe(false);
    expect(await verify(dev, { ...proof, a: [DEV_PROOF_TAG - 1n, proof.a[1]] }, signals), "another tag").toBe(false);
    const outOfField = [R, ...signals.slice(1)];
    expect(await verify(dev, devProof({ verifier, chainId: dev.manifest.chainId, publicSignals: outOfField }), outOfField), "a signal >= r").toBe(false);
  });
});

describe("a stack with dev proofs", () => {
  it("says so in its manifest, stack.json and health, and its manifest is the same bytes on every start", async () => {
    const again = await start({ proofs: "dev", store: ":memory:" });
    expect(await readFile(again.manifestPath)).toEqual(await readFile(dev.manifestPath));
    expect(again.proofs).toBe("dev");
    const info = JSON.parse(await readFile(dev.stackInfoPath, "utf8")) as { proofs?: string };
    expect(info.proofs).toBe("dev");
    const health = (await (await fetch(`${dev.queueUrl}/api/queue/health`)).json()) as { checks: { proofs: { system: string; detail: string } } };
    expect(health.checks.proofs.system).toBe("dev");
    expect(health.checks.proofs.detail).toMatch(/^dev proofs/);
    expect(stackEnvironment(dev).QUEUE_DEVSTACK_PROOFS).toBe("dev");
    expect(stackEnvironment(real).QUEUE_DEVSTACK_PROOFS).toBe("groth16");
    const page = await (await fetch(`${dev.queueUrl}/api/dev/dashboard`)).text();
    expect(page).toContain(`class="dev-proofs"`);
    expect(await (await fetch(`${real.queueUrl}/api/dev/dashboard`)).text()).not.toContain(`class="dev-proofs"`);
    // Same addresses as a real stack: only the verifier's code differs.
    expect(dev.manifest.poolAddress).toBe(real.manifest.poolAddress);
    expect(dev.manifest.queue.proof.verifier.runtimeCodeHash).not.toBe(real.manifest.queue.proof.verifier.runtimeCodeHash);
  });

  it("is the default of every stack the process starts while QUEUE_DEVSTACK_PROOFS=dev, unless one asks for real proofs", async () => {
    const saved = process.env[PROOFS_VARIABLE];
    try {
      process.env[PROOFS_VARIABLE] = "dev";
      const [byDefault, explicit] = await Promise.all([start({ store: ":memory:" }), start({ store: ":memory:", proofs: "groth16" })]);
      expect([byDefault.proofs, explicit.proofs]).toEqual(["dev", "groth16"]);
      process.env[PROOFS_VARIABLE] = "fake";
      await expect(start({ store: ":memory:" })).rejects.toThrow(/QUEUE_DEVSTACK_PROOFS must be "groth16" or "dev"/);
    } finally {
      if (saved === undefined) delete process.env[PROOFS_VARIABLE];
      else process.env[PROOFS_VARIABLE] = saved;
    }
  });

  it("relays a private send with a dev proof to confirmed, the client having computed the full witness", async () => {
    const pool = await poolFixture(dev);
    expect(pool.prover.proofSystem).toBe("dev");
    const queue = createQueueClient({ baseUrl: dev.queueUrl, reviewed: reviewedFrom(dev.manifest) });
    const config = await queue.beforePrepare();
    const alice = createAccountKeys();
    const fee = BigInt(config.relayFees.fees[0]?.send ?? "0");
    const { state, input } = await pool.fundedNote(2, alice, pool.usdc("10"));
    const { transaction } = await pool.prove({ tree: state.tree, keys: alice, inputs: [input], outputs: [{ amount: pool.usdc("10") - fee, to: recipientOf(createAccountKeys()) }], fee, relayer: dev.relayer.address });
    expect(transaction.proof.a[0]).toBe(DEV_PROOF_TAG);
    const op = await queue.waitFor("send", (await queue.submit("send", config, transaction)).id);
    expect(op.state).toBe("confirmed");
  });

  it("fails a witness that breaks a constraint with the template and line, before anything is proved", async () => {
    const pool = await poolFixture(dev);
    const keys = createAccountKeys();
    const { state, input } = await pool.fundedNote(3, keys, pool.usdc("5"));
    // Outputs worth more than the input: value conservation fails in the witness.
    const broken = prepareTransaction({
      deployment: pool.deployment, asset: pool.asset, tree: state.tree, keys, inputs: [input],
      outputs: [{ amount: pool.usdc("5"), to: recipientOf(keys) }], fee: 0n,
      prover: { ...pool.prover, prove: (signals) => pool.prover.prove({ ...signals, outAmount: [pool.usdc("6").toString(), "1"] }) },
    });
    const error = await broken.then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(WitnessConstraintError);
    expect((error as WitnessConstraintError).template).toMatch(/^JoinSplit/);
    expect((error as WitnessConstraintError).line).toBeGreaterThan(0);
    expect((error as Error).message).toMatch(/template JoinSplit\w*, line \d+/);
    // docs/fast-tests.md's example is this error's (issue 40, item 10: it said line 72, the error line 103).
    expect((error as Error).message).toContain(await fastTestsExample());
  });
});

describe("a dev-proofs bundle", () => {
  it("records the mode, and a stack loaded from it keeps it; asking it for real proofs is refused", async () => {
    const file = `${await tempDir("dev-bundle-")}/dev.qdbundle`;
    await dev.save(file);
    const loaded = await start({ load: file, stateDir: await tempDir("dev-load-") });
    expect(loaded.proofs).toBe("dev");
    expect(loaded.manifest.queue.proof.system).toBe("dev");
    await expect(start({ load: file, stateDir: await tempDir("dev-load-"), proofs: "groth16" })).rejects.toThrow(/saved with dev proofs; it cannot start with real Groth16 proofs/);
  });
});

describe("a client of the other proof system", () => {
  it("fails at once with one error naming both, a real-proof client on a dev stack and a dev-proof client on a real one", async () => {
    for (const [stack, client] of [[dev, "groth16"], [real, "dev"]] as const) {
      const queue = createQueueClient({ baseUrl: stack.queueUrl, reviewed: { ...reviewedFrom(stack.manifest), proofSystem: client } });
      const error = await queue.beforePrepare().then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(ProofSystemMismatchError);
      expect((error as Error).message).toContain("dev proofs");
      expect((error as Error).message).toContain("real Groth16 proofs");
    }
  });

  it("whose dev proof reaches a real-proof stack anyway is refused before anything is broadcast", async () => {
    const pool = await poolFixture(real);
    const reviewed = reviewedFrom(real.manifest);
    const devProver = createProver(await fetchProofFiles(real.queueUrl, real.manifest, reviewed), { ...reviewed, proofSystem: "dev" });
    const keys = createAccountKeys();
    const config = real.manifest;
    const fee = BigInt(config.relayFees.fees[0]?.send ?? "0");
    const { state, input } = await pool.fundedNote(2, keys, pool.usdc("5"));
    const { transaction } = await prepareTransaction({ deployment: pool.deployment, asset: pool.asset, prover: devProver, tree: state.tree, keys, inputs: [input], outputs: [{ amount: pool.usdc("5") - fee, to: recipientOf(keys) }], fee, relayer: real.relayer.address });
    const nonce = await rpc<Hex>(real.rpcUrl, "eth_getTransactionCount", [real.relayer.address, "pending"]);
    const queue = createQueueClient({ baseUrl: real.queueUrl, reviewed });
    const error = await queue.submit("send", config, transaction).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(QueueProblemError);
    expect((error as QueueProblemError).code).toBe("invalid_proof");
    expect(await rpc<Hex>(real.rpcUrl, "eth_getTransactionCount", [real.relayer.address, "pending"])).toBe(nonce);
  });
});

describe("the runtime's deployment check", () => {
  it("refuses a manifest whose proof system is not the one the Pool's verifier expects, naming both", async () => {
    const client = createChainClient(dev.rpcUrl);
    const claimsReal = { ...dev.manifest, queue: { ...dev.manifest.queue, proof: { ...dev.manifest.queue.proof, system: "groth16" as const } } };
    await expect(verifyDeployment(client, claimsReal)).rejects.toThrow(/expects dev proofs, the manifest says real Groth16 proofs/);
    await expect(verifyDeployment(client, dev.manifest)).resolves.toBeUndefined();
  });

  it("refuses dev proofs with a pinned Pool, whose verifier is real", async () => {
    await expect(start({ proofs: "dev", forkUrl: "http://127.0.0.1:9", pool: real.manifest.poolAddress })).rejects.toThrow(/dev proofs .*pinned Pool/);
  });
});
