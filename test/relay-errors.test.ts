import { readFile } from "node:fs/promises";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { parseEther, type Address } from "viem";
import type { DevStack } from "../harness/index.ts";
import { createAccountKeys, hashExtData, MerkleTree, commitmentOf, randomFieldElement, recipientOf, toRelayRequest, type Note } from "../harness/client/index.ts";
import type { RelayRequest } from "../src/schemas/request.ts";
import { publicAmountOf } from "../src/chain/ext-data.ts";
import { provenRequest, type poolFixture } from "./support/pool.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { rpc, hex } from "./support/rpc.ts";

// Every admission check has a stable code and status; each is provoked here on a real stack.
let stack: DevStack;
let pool: Awaited<ReturnType<typeof poolFixture>>;
let logs = "";
let valid: RelayRequest; // a correct send, never submitted as is until the end
let spare: RelayRequest; // another, for the recovery after a refund
const SECRET = "7469726564206f662073656372657473"; // what a confused client might send: must never be logged or stored

const stream = new Writable({ write: (chunk, _enc, done) => ((logs += chunk.toString()), done()) });
withQueueStack({ options: { logger: { level: "info", stream } as never } }, async (started) => {
  ({ stack, pool } = started);
  valid = await provenRequest(stack, pool, { amount: "10" });
  spare = await provenRequest(stack, pool, { from: 3, amount: "10", toSelf: true });
});

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${stack.queueUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, unknown>;
  if (response.status >= 400) expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  return { status: response.status, body: json, headers: response.headers };
}
const send = (body: unknown, headers?: Record<string, string>) => post("/api/queue/send-relay", body, headers);

/** A copy of the valid request with extData changed and extDataHash recomputed, so the binding holds. */
function rebound(change: Partial<RelayRequest["extData"]>): RelayRequest {
  const r = structuredClone(valid);
  Object.assign(r.extData, change);
  const m = stack.manifest;
  r.publicInputs.publicAmount = publicAmountOf(BigInt(r.extData.extAmount), BigInt(r.extData.fee)).toString();
  r.publicInputs.extDataHash = hashExtData({ chainId: m.chainId, poolAddress: m.poolAddress, domain: BigInt(m.domain) }, r.publicInputs.asset, {
    ...r.extData,
    extAmount: BigInt(r.extData.extAmount),
    fee: BigInt(r.extData.fee),
  } as never).toString();
  return r;
}

describe("refused before anything is queued", () => {
  it("400 invalid_request: an unknown member (a secret sent by mistake) is refused, never logged or stored", async () => {
    const top = await send({ ...valid, noteOpening: { blinding: SECRET } });
    expect(top).toMatchObject({ status: 400, body: { code: "invalid_request" } });
    const nested = await send({ ...valid, extData: { ...valid.extData, spendingKey: SECRET } });
    expect(nested).toMatchObject({ status: 400, body: { code: "invalid_request" } });
    expect(JSON.stringify(nested.body)).not.toContain(SECRET);
    expect(await send({ ...valid, proof: { ...valid.proof, a: ["1"] } })).toMatchObject({ status: 400, body: { code: "invalid_request" } });
    expect(await send(valid, { "idempotency-key": "x".repeat(300) })).toMatchObject({ status: 400, body: { code: "invalid_request" } });
    expect(logs).toContain("/api/queue/send-relay"); // requests are logged...
    expect(logs).not.toContain(SECRET); // ...their bodies are not
    const stored = await readFile(`${stack.stateDir}/queue.sqlite`).then((b) => b.toString("latin1"), () => "");
    const wal = await readFile(`${stack.stateDir}/queue.sqlite-wal`).then((b) => b.toString("latin1"), () => "");
    expect(stored + wal).not.toContain(SECRET);
  });

  it("413 payload_too_large", async () => {
    expect(await send({ ...valid, pad: "x".repeat(80 * 1024) })).toMatchObject({ status: 413, body: { code: "payload_too_large" } });
  });

  it("422 wrong_route: a withdrawal sent to send-relay and a send to withdraw-relay", async () => {
    expect(await send(rebound({ extAmount: "-5" }))).toMatchObject({ status: 422, body: { code: "wrong_route" } });
    expect(await post("/api/queue/withdraw-relay", valid)).toMatchObject({ status: 422, body: { code: "wrong_route" } });
  });

  it("422 deployment_mismatch: another chain, Pool or domain", async () => {
    for (const deployment of [
      { ...valid.deployment, chainId: 1 },
      { ...valid.deployment, poolAddress: "0x000000000000000000000000000000000000dEaD" },
      { ...valid.deployment, domain: `0x${"0".repeat(63)}1` },
    ]) {
      const answer = await send({ ...valid, deployment });
      expect(answer).toMatchObject({ status: 422, body: { code: "deployment_mismatch" } });
    }
  });

  it("422 unsupported_asset", async () => {
    const r = structuredClone(valid);
    r.publicInputs.asset = "0x000000000000000000000000000000000000bEEF";
    expect(await send(r)).toMatchObject({ status: 422, body: { code: "unsupported_asset" } });
  });

  it("422 binding_mismatch: execution fields that are not the proof's", async () => {
    const r = structuredClone(valid);
    r.extData.recipient = "0x000000000000000000000000000000000000bEEF";
    expect(await send(r)).toMatchObject({ status: 422, body: { code: "binding_mismatch" } });
  });

  it("422 relayer_mismatch and fee_too_low", async () => {
    expect(await send(rebound({ relayer: stack.accounts[3]?.address as Address }))).toMatchObject({ status: 422, body: { code: "relayer_mismatch" } });
    const low = await send(rebound({ fee: "1" }));
    expect(low).toMatchObject({ status: 422, body: { code: "fee_too_low", minimumFee: stack.manifest.relayFees.fees[0]?.send } });
  });

  it("409 duplicate_nullifier inside one request", async () => {
    const r = structuredClone(valid);
    r.publicInputs.inputNullifiers = [r.publicInputs.inputNullifiers[0], r.publicInputs.inputNullifiers[0]];
    expect(await send(r)).toMatchObject({ status: 409, body: { code: "duplicate_nullifier" } });
  });

  it("422 invalid_proof", async () => {
    const r = structuredClone(valid);
    r.proof.a = [r.proof.a[1], r.proof.a[0]];
    expect(await send(r)).toMatchObject({ status: 422, body: { code: "invalid_proof" } });
    const swapped = structuredClone(valid);
    swapped.publicInputs.outputCommitments = [valid.publicInputs.outputCommitments[1], valid.publicInputs.outputCommitments[0]];
    expect(await send(swapped)).toMatchObject({ status: 422, body: { code: "invalid_proof" } });
  });

  it("409 unknown_root: a valid proof over a tree the Pool never had", async () => {
    const keys = createAccountKeys();
    const tree = new MerkleTree(pool.levels);
    const note: Note = { amount: pool.usdc("1"), asset: pool.asset, ownerPublicKey: keys.notePublicKey, blinding: randomFieldElement() };
    tree.insert(0, commitmentOf(note));
    const fee = BigInt(stack.manifest.relayFees.fees[0]?.send ?? "0");
    const { transaction } = await pool.prove({ tree, keys, inputs: [{ note, leafIndex: 0 }], outputs: [{ amount: pool.usdc("1") - fee, to: recipientOf(keys) }], fee, relayer: stack.relayer.address });
    expect(await send(toRelayRequest(stack.manifest, transaction))).toMatchObject({ status: 409, body: { code: "unknown_root" } });
  });

  it("422 simulation_failed, with the Pool's decoded error", async () => {
    const keys = createAccountKeys();
    const { state, input } = await pool.fundedNote(4, keys, pool.usdc("2"));
    const fee = BigInt(stack.manifest.relayFees.fees[0]?.withdraw ?? "0");
    // Withdraw 1 base unit and pay a larger fee: the Pool refuses (FeeTooHigh); only a simulation can tell.
    // (The client library refuses to build it, so it is proved as extAmount -(1 + fee), fee 0, and changed.)
    const transaction = await pool.proveUnchecked(
      { tree: state.tree, keys, inputs: [input], outputs: [{ amount: pool.usdc("2") - 1n - fee, to: recipientOf(keys) }], extAmount: -(1n + fee), fee: 0n, recipient: stack.accounts[4]?.address as Address, relayer: stack.relayer.address },
      { extAmount: -1n, fee },
    );
    const answer = await post("/api/queue/withdraw-relay", toRelayRequest(stack.manifest, transaction));
    expect(answer).toMatchObject({ status: 422, body: { code: "simulation_failed", revert: { name: "FeeTooHigh" } } });
  });

  it("404 operation_not_found", async () => {
    const answer = await fetch(`${stack.queueUrl}/api/queue/send-status?id=op_nope`);
    expect(answer.status).toBe(404);
    expect(((await answer.json()) as { code: string }).code).toBe("operation_not_found");
    expect((await fetch(`${stack.queueUrl}/api/queue/send-status`)).status).toBe(400);
  });
});

describe("the relayer's own limits: 503 with Retry-After, and recovery", () => {
  it("relayer_unfunded, then accepted once refunded", async () => {
    const balance = await rpc<string>(stack.rpcUrl, "eth_getBalance", [stack.relayer.address, "latest"]);
    await rpc(stack.rpcUrl, "anvil_setBalance", [stack.relayer.address, "0x0"]);
    try {
      const answer = await send(valid);
      expect(answer).toMatchObject({ status: 503, body: { code: "relayer_unfunded" } });
      expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      await rpc(stack.rpcUrl, "anvil_setBalance", [stack.relayer.address, balance]);
    }
    const recovered = await send(spare);
    expect(recovered.status).toBe(202);
    for (;;) {
      const op = (await (await fetch(`${stack.queueUrl}/api/queue/send-status?id=${recovered.body.id}`)).json()) as { state: string; terminal: boolean };
      if (op.terminal) {
        expect(op.state).toBe("confirmed");
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it("gas_price_too_high while the base fee is above the cap", async () => {
    await rpc(stack.rpcUrl, "anvil_setNextBlockBaseFeePerGas", [hex(parseEther("0.000001"))]); // 1000 gwei
    await rpc(stack.rpcUrl, "evm_mine");
    try {
      const answer = await send(valid);
      expect(answer).toMatchObject({ status: 503, body: { code: "gas_price_too_high" } });
      expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      await rpc(stack.rpcUrl, "anvil_setNextBlockBaseFeePerGas", [hex(1_000_000_000n)]);
      await rpc(stack.rpcUrl, "evm_mine");
    }
  });
});

describe("once accepted", () => {
  let acceptedId = "";
  it("Idempotency-Key: the same key and body is the same operation; another body is 422", async () => {
    const key = `test-${randomFieldElement()}`;
    const first = await send(valid, { "idempotency-key": key });
    expect(first.status).toBe(202);
    expect(first.headers.get("location")).toBe(`/api/queue/send-status?id=${first.body.id}`);
    acceptedId = String(first.body.id);
    const again = await send(valid, { "idempotency-key": key });
    expect(again).toMatchObject({ status: 202, body: { id: first.body.id } });
    const other = await send(rebound({ fee: String(BigInt(valid.extData.fee) + 1n) }), { "idempotency-key": key });
    expect(other).toMatchObject({ status: 422, body: { code: "idempotency_key_reused", operationId: first.body.id } });

    // An unkeyed twin: 409 nullifier_in_flight (live) or nullifier_spent (already confirmed), naming the operation.
    const twin = await send(valid);
    expect(twin.status).toBe(409);
    expect(["nullifier_in_flight", "nullifier_spent"]).toContain(twin.body.code);
    expect(twin.body.operationId).toBe(first.body.id);

    // A send's id is not a withdrawal's.
    expect((await fetch(`${stack.queueUrl}/api/queue/withdraw-status?id=${first.body.id}`)).status).toBe(404);
  });

  it("409 nullifier_spent once it is confirmed", async () => {
    for (;;) {
      const op = (await (await fetch(`${stack.queueUrl}/api/queue/send-status?id=${acceptedId}`)).json()) as { state: string; terminal: boolean };
      if (op.terminal) {
        if (process.env.DEBUG_OPS) console.log(JSON.stringify(op, null, 1));
        expect(op.state).toBe("confirmed");
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await send(valid)).toMatchObject({ status: 409, body: { code: "nullifier_spent", operationId: acceptedId } });
  });
});
