import { getAddress, keccak256, parseTransaction, recoverTransactionAddress, type Hex } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import { transactCalldata } from "../../src/relay/checks.ts";
import type { AttemptRow, OperationRow, StoreRows } from "../../src/relay/store-rows.ts";
import { printable } from "../../src/printable.ts";

/** The relayer of every stack: anvil's dev account #1, re-derived at load (a bundle holds no key). */
export const RELAYER = mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 1 }).address;

/** The failure code of an operation whose stored attempt is not the relayer's own call of the Pool. */
export const BUNDLE_ATTEMPT_INVALID = "bundle_attempt_invalid";

/**
 * What a loaded stack would re-broadcast, decided per operation before it runs: each stored attempt must
 * be the relayer's own transaction of its operation (decoded: its signer, the Pool, the operation's
 * calldata, the manifest's chain, and its hash). An operation with an attempt that is not fails with
 * `bundle_attempt_invalid` and keeps none of its attempts (their bytes never reach the store, so nothing
 * can re-broadcast them); the others load as they are. Attempts of no operation are dropped.
 * Returns the rows to store and the operations failed, with why.
 */
export async function settleAttempts(rows: StoreRows, manifest: DeploymentConfig): Promise<{ rows: StoreRows; failed: Array<{ id: string; detail: string }> }> {
  const operations = new Map(rows.operations.map((op) => [op.id, op]));
  const problems = new Map<string, string>();
  for (const attempt of rows.attempts) {
    const op = operations.get(attempt.operation_id);
    if (!op || problems.has(op.id)) continue;
    const problem = await attemptProblem(attempt, op, manifest);
    if (problem !== null) problems.set(op.id, problem);
  }
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
  if (getAddress(signer) !== RELAYER) return `${name} is not signed by the relayer (${RELAYER})`;
  if (tx.chainId !== manifest.chainId) return `${name} is not for chain ${manifest.chainId}`;
  if (tx.to === undefined || tx.to === null || getAddress(tx.to) !== getAddress(manifest.poolAddress)) return `${name} is not sent to the Pool`;
  if (tx.data !== transactCalldata(JSON.parse(op.request)) || (tx.value ?? 0n) !== 0n) return `${name} is not its operation's call of the Pool`;
  return null;
}

