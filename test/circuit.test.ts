import { readFile } from "node:fs/promises";
import path from "node:path";
import * as snarkjs from "snarkjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Address } from "viem";
import { CIRCUIT_BUILD_DIR, loadCircuitManifest } from "../harness/deployment/index.ts";
import {
  buildWitness,
  closeProvers,
  commitmentOf,
  createAccountKeys,
  FIELD_SIZE,
  MerkleTree,
  randomFieldElement,
  recipientOf,
  type Note,
  type TransactionRequest,
} from "../harness/client/index.ts";

// The circuit alone, with the committed proof files and no chain: a valid witness proves and
// verifies; each broken rule makes the witness unsatisfiable (snarkjs refuses to compute it).
let wasm: Uint8Array;
let vk: unknown;
let request: TransactionRequest;

beforeAll(async () => {
  wasm = await readFile(path.join(CIRCUIT_BUILD_DIR, "joinsplit.wasm"));
  vk = JSON.parse(await readFile(path.join(CIRCUIT_BUILD_DIR, "verification_key.json"), "utf8"));
  const { levels } = await loadCircuitManifest();
  const keys = createAccountKeys();
  const asset = "0x1111111111111111111111111111111111111111" as Address;
  const tree = new MerkleTree(levels);
  const notes: Note[] = [30n, 12n].map((amount) => ({ amount, asset, ownerPublicKey: keys.notePublicKey, blinding: randomFieldElement() }));
  notes.forEach((note, i) => tree.insert(i + 4, commitmentOf(note)));
  request = {
    deployment: { chainId: 11155111, poolAddress: "0x2222222222222222222222222222222222222222", domain: 777n },
    tree,
    keys,
    asset,
    inputs: notes.map((note, i) => ({ note, leafIndex: i + 4 })),
    outputs: [{ amount: 20n, to: recipientOf(createAccountKeys()) }, { amount: 12n, to: recipientOf(keys) }],
    extAmount: -8n,
    fee: 2n,
    recipient: "0x3333333333333333333333333333333333333333",
  };
});
afterAll(closeProvers);

const satisfiable = (signals: Record<string, unknown>) =>
  snarkjs.wtns.calculate(signals, { type: "mem", data: wasm }, { type: "mem" }).then(
    () => true,
    () => false,
  );

describe("the join-split circuit", () => {
  it("proves a valid two-in two-out withdrawal, and the proof verifies only with its own public signals", async () => {
    const witness = buildWitness(request);
    const zkey = await readFile(path.join(CIRCUIT_BUILD_DIR, "joinsplit_final.zkey"));
    const { proof, publicSignals } = await snarkjs.groth16.fullProve(witness.signals, { type: "mem", data: wasm }, { type: "mem", data: zkey });
    expect(publicSignals.map(BigInt)).toEqual([
      witness.publicInputs.root,
      witness.publicInputs.publicAmount,
      witness.publicInputs.extDataHash,
      BigInt(request.asset),
      request.deployment.domain,
      ...witness.publicInputs.inputNullifiers,
      ...witness.publicInputs.outputCommitments,
    ]);
    expect(witness.publicInputs.publicAmount).toBe(FIELD_SIZE - 10n);
    expect(await snarkjs.groth16.verify(vk, publicSignals, proof)).toBe(true);
    const otherDomain = [...publicSignals];
    otherDomain[4] = "778";
    expect(await snarkjs.groth16.verify(vk, otherDomain, proof)).toBe(false);
  }, 60_000);

  it("refuses broken rules", async () => {
    const base = buildWitness(request).signals;
    expect(await satisfiable(base)).toBe(true);
    const broken: Array<[string, (s: Record<string, any>) => void]> = [
      ["value not conserved", (s) => (s.outAmount = ["21", "12"])],
      ["an output beyond 2^248 (wrapping the field)", (s) => (s.outAmount = [(FIELD_SIZE - 1n).toString(), "33"])],
      ["a root the notes are not under", (s) => (s.root = "12345")],
      ["a nullifier of another leaf index", (s) => (s.inLeafIndex = ["5", "5"])],
      ["the same note spent twice in one proof", (s) => {
        s.inAmount = [s.inAmount[0], s.inAmount[0]];
        s.inBlinding = [s.inBlinding[0], s.inBlinding[0]];
        s.inLeafIndex = [s.inLeafIndex[0], s.inLeafIndex[0]];
        s.inPathElements = [s.inPathElements[0], s.inPathElements[0]];
        s.inputNullifier = [s.inputNullifier[0], s.inputNullifier[0]];
      }],
      ["a nullifier made for another domain", (s) => (s.domain = "778")],
      ["someone else's spending key", (s) => (s.inPrivateKey = [randomFieldElement().toString(), s.inPrivateKey[1]])],
    ];
    for (const [rule, mutate] of broken) {
      const signals = structuredClone(base);
      mutate(signals);
      expect(await satisfiable(signals), rule).toBe(false);
    }
  });
});
