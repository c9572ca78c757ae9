import type { DatabaseSync } from "node:sqlite";
import { getAddress, keccak256, parseTransaction, recoverTransactionAddress, type Hex } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import { transactCalldata } from "../../src/relay/checks.ts";
import { printable } from "../../src/printable.ts";

/** The relayer of every stack: anvil's dev account #1, re-derived at load (a bundle holds no key). */
const RELAYER = mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 1 }).address;
/** A colleague's clock may run a little ahead; more, and the date is not one a stack wrote. */
const CLOCK_SKEW_MS = 10 * 60 * 1000;

/**
 * What a loaded stack would re-broadcast or trust, checked before it runs: each stored attempt is the
 * relayer's own transaction of its operation (decoded: its signer, the Pool, the operation's calldata,
 * the manifest's chain, and its hash), and no date lies in the future (an operation dated 2099 would be
 * "recent" for ever: never re-simulated, never expired). Throws the first problem, naming the row.
 */
export async function checkStoredOperations(db: DatabaseSync, manifest: DeploymentConfig): Promise<void> {
  const latest = Date.now() + CLOCK_SKEW_MS;
  const future = (at: unknown) => typeof at !== "string" || !(Date.parse(at) <= latest);
  const operations = db.prepare("SELECT id, request, history, created_at, updated_at FROM operations").all() as Array<Record<string, string>>;
  const requests = new Map<string, string>();
  for (const op of operations) {
    const id = printable(String(op.id).slice(0, 80));
    const dates = [op.created_at, op.updated_at, ...(JSON.parse(op.history as string) as Array<{ at?: unknown }>).map((entry) => entry.at)];
    if (dates.some(future)) throw new Error(`operation ${id} is dated in the future (or not dated): a stack writes no such date`);
    requests.set(op.id as string, op.request as string);
  }
  const attempts = db.prepare("SELECT hash, operation_id, raw, created_at FROM attempts").all() as Array<Record<string, string>>;
  for (const attempt of attempts) {
    const name = `attempt ${printable(String(attempt.hash).slice(0, 80))}`;
    if (future(attempt.created_at)) throw new Error(`${name} is dated in the future (or not dated)`);
    const request = requests.get(attempt.operation_id as string);
    if (request === undefined) throw new Error(`${name} belongs to no operation`);
    const raw = attempt.raw as Hex;
    let tx: ReturnType<typeof parseTransaction>;
    let signer: string;
    try {
      tx = parseTransaction(raw);
      signer = await recoverTransactionAddress({ serializedTransaction: raw as never });
    } catch {
      throw new Error(`${name} is not a signed transaction`);
    }
    if (keccak256(raw) !== attempt.hash) throw new Error(`${name} is not the hash of its transaction`);
    if (getAddress(signer) !== RELAYER) throw new Error(`${name} is not signed by the relayer (${RELAYER})`);
    if (tx.chainId !== manifest.chainId) throw new Error(`${name} is not for chain ${manifest.chainId}`);
    if (tx.to === undefined || tx.to === null || getAddress(tx.to) !== getAddress(manifest.poolAddress)) throw new Error(`${name} is not sent to the Pool`);
    let calldata: Hex;
    try {
      calldata = transactCalldata(JSON.parse(request));
    } catch {
      throw new Error(`${name}'s operation holds no valid request`);
    }
    if (tx.data !== calldata || (tx.value ?? 0n) !== 0n) throw new Error(`${name} is not its operation's call of the Pool`);
  }
}
