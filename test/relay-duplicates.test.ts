import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { decodeFunctionData, type Hex } from "viem";
import { poolAbi, toRelayRequest } from "../harness/client/index.ts";
import type { Operation } from "../src/schemas/operation.ts";
import type { RelayRequest } from "../src/schemas/request.ts";
import { admissionHooks } from "../src/relay/relayer.ts";
import { clients, RELAYER_KEY } from "./support/chain.ts";
import { GAS, provenSend } from "./support/pool.ts";
import { withQueueStack, type QueueStack } from "./support/queue-stack.ts";
import { rpc } from "./support/rpc.ts";
import { pollUntil, relayerNonce } from "./support/runtime-process.ts";

// Copies of one relay, whatever their timing, put exactly one transaction on chain, and every refusal
// caused by our own operation names it. Real stack, real proofs; the stack's runtime runs in this
// process, so a test can hold an admission between its chain checks and its insert.
const RESIMULATE_AFTER_MS = 1_000;
let s: QueueStack;
withQueueStack({ options: { relay: { stuckAfterMs: 60_000, resimulateAfterMs: RESIMULATE_AFTER_MS } } }, (started) => (s = started));
afterEach(() => void (admissionHooks.afterChecks = undefined));

/** From now on, every admission whose checks pass is held before its insert, until `release()`. */
function holdAdmissions() {
  const held: Array<() => void> = [];
  let arrived = () => {};
  admissionHooks.afterChecks = () =>
    new Promise<void>((resolve) => {
      held.push(resolve);
      arrived();
    });
  return {
    /** Resolves once `count` admissions are held (their chain reads made). */
    async reached(count: number): Promise<void> {
      while (held.length < count) await new Promise<void>((resolve) => (arrived = resolve));
    },
    /** Admissions from now on go through. */
    stop: () => void (admissionHooks.afterChecks = undefined),
    /** The held ones go on to their insert. */
    release: () => held.splice(0).forEach((resume) => resume()),
  };
}

const proven = async () => toRelayRequest(s.stack.manifest, (await provenSend(s.stack, s.pool, s.queue, 2)).transaction);

type Answer = { status: number; body: Operation & { code?: string; operationId?: string; nullifier?: string } };

async function send(body: RelayRequest, key?: string): Promise<Answer> {
  const response = await fetch(`${s.stack.queueUrl}/api/queue/send-relay`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key === undefined ? {} : { "idempotency-key": key }) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Answer["body"] };
}

const status = (id: string) => async () => (await (await fetch(`${s.stack.queueUrl}/api/queue/send-status?id=${id}`)).json()) as Operation;
/** The operation once it has ended (a saturated CPU makes that slow). */
const ended = (id: string) => pollUntil(status(id), (o) => o.terminal, 1_200);

const blockNumber = async () => Number(await rpc<Hex>(s.stack.rpcUrl, "eth_blockNumber"));

/** Every transaction mined after block `from` that calls the Pool with these nullifiers, status and all. */
async function minedWith(nullifiers: readonly string[], from: number): Promise<Array<{ hash: Hex; status: Hex }>> {
  const found: Array<{ hash: Hex; status: Hex }> = [];
  const head = await blockNumber();
  for (let n = from + 1; n <= head; n++) {
    const block = await rpc<{ transactions: Array<{ hash: Hex; to: string | null; input: Hex }> }>(s.stack.rpcUrl, "eth_getBlockByNumber", [`0x${n.toString(16)}`, true]);
    for (const tx of block.transactions) {
      if (tx.to?.toLowerCase() !== s.stack.manifest.poolAddress.toLowerCase()) continue;
      let carried: readonly bigint[] = [];
      try {
        const { functionName, args } = decodeFunctionData({ abi: poolAbi, data: tx.input });
        if (functionName === "transact" || functionName === "transactAction") carried = (args[1] as { inputNullifiers: readonly bigint[] }).inputNullifiers;
      } catch {
        continue; // not a Pool call with inputs
      }
      if (!carried.some((c) => nullifiers.includes(c.toString()))) continue;
      const receipt = await rpc<{ status: Hex }>(s.stack.rpcUrl, "eth_getTransactionReceipt", [tx.hash]);
      found.push({ hash: tx.hash, status: receipt.status });
    }
  }
  return found;
}

describe("a copy whose checks passed before its twin was mined, stored after the twin was confirmed", () => {
  it("is refused naming the twin (unkeyed) or answers the twin (keyed): nothing is sent twice", async () => {
    const body = await proven();
    const from = await blockNumber();
    const hold = holdAdmissions();
    const unkeyed = send(body);
    const keyed = send(body, `late-${Math.random()}`);
    await hold.reached(2); // both read the chain: nothing spent, nothing of ours in flight
    hold.stop();
    const first = await send(body);
    expect(first.status).toBe(202);
    expect((await ended(first.body.id)).state).toBe("confirmed");
    hold.release();
    expect(await unkeyed).toMatchObject({ status: 409, body: { code: "nullifier_spent", operationId: first.body.id } });
    expect(await keyed).toMatchObject({ status: 202, body: { id: first.body.id, state: "confirmed" } });
    expect(await minedWith(body.publicInputs.inputNullifiers, from)).toHaveLength(1);
  });
});

describe("an admission held past resimulateAfterMs while its nullifiers are spent by a transaction the store does not know", () => {
  it("is accepted, and checked again before signing: rejected, nothing broadcast", async () => {
    const body = await proven();
    const relayer = clients(s.stack.rpcUrl, RELAYER_KEY);
    const hold = holdAdmissions();
    const late = send(body);
    await hold.reached(1);
    const readBy = Date.now(); // its reads were made before this
    hold.stop();
    // The relayer key used outside the runtime (the fee is the sender's, so only it can send this body).
    const hash = await relayer.wallet.writeContract({ address: s.pool.deployment.poolAddress, abi: poolAbi, functionName: "transact", args: [body.proof, body.publicInputs, body.extData] as never, gas: GAS });
    expect((await relayer.public.waitForTransactionReceipt({ hash })).status).toBe("success");
    const nonceBefore = await relayerNonce(s.stack);
    await sleep(Math.max(0, readBy + RESIMULATE_AFTER_MS - Date.now()) + 50); // its reads are now older than resimulateAfterMs
    hold.release();
    const accepted = await late;
    expect(accepted.status).toBe(202); // the store knows nothing of that transaction
    const op = await ended(accepted.body.id);
    expect(op, JSON.stringify(op.history)).toMatchObject({ state: "rejected", reason: { code: "nullifier_spent" }, transactions: [] });
    expect(await relayerNonce(s.stack)).toBe(nonceBefore);
  });
});

describe("50 concurrent identical relays, 25 of them with an Idempotency-Key", () => {
  it("put exactly one transaction on chain; every 202 is that operation and every 409 names it", async () => {
    const body = await proven();
    const from = await blockNumber();
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? send(body) : send(body, `storm-${i}-${Math.random()}`))));
    const accepted = [...new Set(answers.filter((a) => a.status === 202).map((a) => a.body.id))];
    // Wait for every accepted operation to end before the chain is read: a second one would be mined by then.
    const ends = await Promise.all(accepted.map(ended));
    const mined = await minedWith(body.publicInputs.inputNullifiers, from);
    const summary = JSON.stringify({ ends: ends.map((o) => [o.id, o.state]), mined, refusals: answers.filter((a) => a.status !== 202).map((a) => [a.status, a.body.code, a.body.operationId]) });
    expect(mined, summary).toHaveLength(1);
    expect(mined[0]?.status, summary).toBe("0x1");
    expect(accepted, summary).toHaveLength(1);
    const [id] = accepted as [string];
    expect(ends[0]?.state).toBe("confirmed");
    for (const answer of answers) {
      if (answer.status === 202) continue;
      // A chain too slow for the admission's deadline is a 503 to retry (a saturated CPU may do that).
      if (answer.status === 503 && answer.body.code === "chain_unavailable") continue;
      expect(answer.status, summary).toBe(409);
      expect(["nullifier_in_flight", "nullifier_spent"], summary).toContain(answer.body.code);
      expect(answer.body.operationId, summary).toBe(id);
    }
  });
});
