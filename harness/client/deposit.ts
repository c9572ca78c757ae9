import { erc20Abi, type Account, type Address, type Chain, type PublicClient, type TransactionReceipt, type Transport, type WalletClient } from "viem";
import { randomFieldElement } from "./field.ts";
import type { RecipientKeys } from "./keys.ts";
import { encryptNote, precommitmentOf, type Note } from "./note.ts";
import { poolAbi } from "./pool-abi.ts";

/** Gas of a deposit, set rather than estimated (it inserts into a Poseidon tree: about 1.06M). */
export const DEPOSIT_GAS = 2_000_000n;

/**
 * Deposits `amount` of `asset` into the Pool as a new note for `to` (yourself or anyone whose public
 * keys you have): approves the Pool if its allowance is short, then calls Pool.deposit with the note's
 * precommitment and its opening encrypted to the recipient. The blinding is chosen here and never
 * leaves the client; the returned note is what the recipient will find when they sync.
 */
export async function deposit(args: {
  wallet: WalletClient<Transport, Chain | undefined, Account>;
  client: PublicClient;
  pool: Address;
  asset: Address;
  amount: bigint;
  to: RecipientKeys;
}): Promise<{ note: Note; receipt: TransactionReceipt }> {
  const { wallet, client, pool, asset, amount, to } = args;
  const owner = wallet.account.address;
  const allowance = await client.readContract({ address: asset, abi: erc20Abi, functionName: "allowance", args: [owner, pool] });
  if (allowance < amount) {
    const approval = await wallet.writeContract({ address: asset, abi: erc20Abi, functionName: "approve", args: [pool, amount], chain: wallet.chain });
    await client.waitForTransactionReceipt({ hash: approval });
  }
  const note: Note = { amount, asset, ownerPublicKey: to.notePublicKey, blinding: randomFieldElement() };
  const hash = await wallet.writeContract({
    address: pool,
    abi: poolAbi,
    functionName: "deposit",
    args: [asset, amount, precommitmentOf(note), encryptNote(note, to.encryptionPublicKey)],
    gas: DEPOSIT_GAS,
    chain: wallet.chain,
  });
  const receipt = await client.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`deposit ${hash} reverted`);
  return { note, receipt };
}
