import { getAddress, keccak256, parseTransaction, recoverTransactionAddress, type Hex } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import { transactCalldata } from "../../src/chain/pool-call.ts";
import type { AttemptRow, OperationRow, StoreRows } from "../../src/store/rows.ts";
import { printable } from "../../src/printable.ts";
import { TERMINAL_STATES } from "../../src/schemas/operation.ts";

let relayer: Hex | undefined;
/**
 * The relayer of every stack: anvil's dev account #1, derived (a bundle holds no key) when a bundle is
 * first checked, not as the module loads: the derivation takes 0.2 s, which every start paid.
 */
export const relayerAddress = (): Hex => (relayer ??= mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 1 }).address);

/** The failure code of an operation whose stored attempt is not the relayer's own call of the Pool. */
export const BUNDLE_ATTEMPT_INVALID = "bundle_attempt_invalid";

/**
 * What a loaded stack would re-broadcast, decided per operation before it runs: each stored attempt must
 * be the relayer's own transaction of its operation (decoded: its signer, the Pool, the operation's
 * calldata, the manifest's chain, its hash, and its nonce and fees as its row says), and its nonce one
 * the relayer could still have pending on the bundle's chain (see nonceProblems). An operation with an
 * attempt that is not fails with `bundle_attempt_invalid` and keeps none of its attempts (their bytes
 * never reach the store, so nothing can re-broadcast them or sign after their nonce); the others load as
 * they are. Attempts of no operation are dropped. `relayerNonce` is the relayer's nonce in the bundle's
 * chain (its account in the dump). Returns the rows to store and the operations failed, with why.
 */
export async function settleAttempts(rows: StoreRows, manifest: DeploymentConfig, relayerNonce: number): Promise<{ rows: StoreRows; failed: Array<{ id: string; detail: string }> }> {
  const operations = new Map(rows.operations.map((op) => [op.id, op]));
  const problems = new Map<string, string>();
  for (const attempt of rows.attempts) {
    const op = operations.get(attempt.operation_id);
    if (!op || problems.has(op.id)) continue;
    const problem = await attemptProblem(attempt, op, manifest);
    if (problem !== null) problems.set(op.id, problem);
  }
  // Over the attempts each known to be what it says: a failed operation's nonce fills no gap.
  for (const [id, detail] of nonceProblems(rows.attempts.filter((a) => operations.has(a.operation_id) && !problems.has(a.operation_id)), operations, relayerNonce)) problems.set(id, detail);
  const at = new Date().toISOString();
  const failed = [...problems].map(([id, detail]) => ({ id, detail }));
  return {
    failed,
    rows: {
      ...rows,
      attempts: rows.attempts.filter((a) => operations.has(a.operation_id) && !problems.has(a.operation_id)),
      operations: rows.operations.map((op) => {
        const detail = problems.get(op.id);
        if (detail === undefined) return op;
        const history = [...(JSON.parse(op.history) as unknown[]), { state: "rejected", at, detail }];
        // Failed, whatever state it claimed: a mined or confirmed one is only its stored word.
        return { ...op, state: "rejected", reason: JSON.stringify({ code: BUNDLE_ATTEMPT_INVALID, detail }), mined_hash: null, block: null, history: JSON.stringify(history), updated_at: at } satisfies OperationRow;
      }),
    },
  };
}

async function attemptProblem(attempt: AttemptRow, op: OperationRow, manifest: DeploymentConfig): Promise<string | null> {
  const name = `its attempt ${printable(attempt.hash)}`;
  const raw = attempt.raw as Hex;
  let tx: ReturnType<typeof parseTransaction>;
  let signer: string;
  try {
    tx = parseTransaction(raw);
    signer = await recoverTransactionAddress({ serializedTransaction: raw as never });
  } catch {
    return `${name} is not a signed transaction`;
  }
  if (keccak256(raw) !== attempt.hash) return `${name} is not the hash of its transaction`;
  if (getAddress(signer) !== relayerAddress()) return `${name} is not signed by the relayer (${relayerAddress()})`;
  if (tx.chainId !== manifest.chainId) return `${name} is not for chain ${manifest.chainId}`;
  if (tx.to === undefined || tx.to === null || getAddress(tx.to) !== getAddress(manifest.poolAddress)) return `${name} is not sent to the Pool`;
  if (tx.data !== transactCalldata(JSON.parse(op.request)) || (tx.value ?? 0n) !== 0n) return `${name} is not its operation's call of the Pool`;
  // The engine signs after the largest stored nonce and bumps from the stored fees: the row must be its bytes.
  if (tx.nonce !== attempt.nonce) return `${name} is at nonce ${tx.nonce}, its row says ${attempt.nonce}`;
  if (tx.type !== "eip1559") return `${name} is a ${printable(String(tx.type))} transaction, not an EIP-1559 one as the relayer signs`;
  // viem leaves a zero fee out of the decoded transaction.
  const [maxFee, priorityFee] = [(tx.maxFeePerGas ?? 0n).toString(), (tx.maxPriorityFeePerGas ?? 0n).toString()];
  if (maxFee !== attempt.max_fee_per_gas || priorityFee !== attempt.max_priority_fee_per_gas) {
    return `${name} offers fees ${maxFee}/${priorityFee} wei (max/priority), its row says ${attempt.max_fee_per_gas}/${attempt.max_priority_fee_per_gas}`;
  }
  return null;
}

/**
 * The nonces of the attempts (each already checked on its own), against the relayer's nonce N in the
 * bundle's chain. The loaded chain's mempool is empty, and the engine signs every new relay after the
 * largest stored nonce, so an attempt at N or above is one the relayer could still have pending only if
 * its operation is live and the live operations' nonces from N up leave no gap: each at its own nonce,
 * together exactly N, N+1, … (so below N + the number of them). Any other (a nonce of 10^9, two
 * operations at one nonce, one past a gap, a confirmed or failed operation at a nonce the chain has not
 * used) could never be mined, and every relay after it would wait behind it for ever. Below N is the
 * chain's past: an included operation's (or a mined one the engine had not yet seen), or one whose nonce
 * another transaction took (the engine finds no receipt and expires it, nonce_consumed); never signed after.
 * An operation's attempts share one nonce (a fee bump replaces at the same nonce).
 */
function nonceProblems(attempts: AttemptRow[], operations: Map<string, OperationRow>, relayerNonce: number): Map<string, string> {
  const problems = new Map<string, string>();
  const nonceOf = new Map<string, { nonce: number; hash: string }>();
  for (const attempt of attempts) {
    const seen = nonceOf.get(attempt.operation_id);
    if (seen === undefined) nonceOf.set(attempt.operation_id, { nonce: attempt.nonce, hash: attempt.hash });
    else if (seen.nonce !== attempt.nonce) problems.set(attempt.operation_id, `its attempts are at nonces ${seen.nonce} and ${attempt.nonce}: a fee bump keeps its nonce`);
  }
  const pending: Array<{ id: string; nonce: number; hash: string }> = [];
  for (const [id, { nonce, hash }] of nonceOf) {
    if (problems.has(id) || nonce < relayerNonce) continue;
    const op = operations.get(id) as OperationRow;
    if (TERMINAL_STATES.has(op.state)) problems.set(id, `its attempt ${printable(hash)} is at nonce ${nonce}, which the relayer has not used in the bundle's chain (its nonce there is ${relayerNonce}), yet it is ${op.state}`);
    else pending.push({ id, nonce, hash });
  }
  // Lowest first (then the earliest operation): the next nonce is taken by one operation, the rest fail.
  pending.sort((a, b) => a.nonce - b.nonce || String(operations.get(a.id)?.created_at).localeCompare(String(operations.get(b.id)?.created_at)) || a.id.localeCompare(b.id));
  let next = relayerNonce;
  for (const { id, nonce, hash } of pending) {
    if (nonce === next) {
      next++;
      continue;
    }
    const held = nonce < next ? "another operation's attempt holds it" : `the relayer's nonce in the bundle's chain is ${relayerNonce}, and nonce ${next} before it is no live attempt's, so it could never be mined`;
    problems.set(id, `its attempt ${printable(hash)} is at nonce ${nonce}, not one the relayer could have pending: ${held}`);
  }
  return problems;
}

