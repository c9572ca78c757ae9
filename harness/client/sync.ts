import type { Address, Hex, PublicClient } from "viem";
import type { AccountKeys } from "./keys.ts";
import { MerkleTree } from "./merkle-tree.ts";
import { decryptNote, nullifierOf, type Note } from "./note.ts";
import { poolAbi } from "./pool-abi.ts";

export interface CommitmentEvent {
  commitment: bigint;
  index: number;
  encryptedOutput: Hex;
}

export interface PoolState {
  tree: MerkleTree;
  commitments: CommitmentEvent[];
  spent: Set<bigint>;
}

/** Rebuilds the Pool's tree and spent set from its events, from the deployment block on. */
export async function syncPool(args: { client: PublicClient; pool: Address; fromBlock: bigint; levels: number }): Promise<PoolState> {
  const { client, pool, fromBlock } = args;
  const [commitmentLogs, nullifierLogs] = await Promise.all([
    client.getContractEvents({ address: pool, abi: poolAbi, eventName: "NewCommitment", fromBlock, toBlock: "latest" }),
    client.getContractEvents({ address: pool, abi: poolAbi, eventName: "NewNullifier", fromBlock, toBlock: "latest" }),
  ]);
  const tree = new MerkleTree(args.levels);
  const commitments = commitmentLogs.map((log) => ({
    commitment: log.args.commitment as bigint,
    index: Number(log.args.index),
    encryptedOutput: log.args.encryptedOutput as Hex,
  }));
  tree.insertAll(commitments.map((c) => ({ index: c.index, leaf: c.commitment })));
  return { tree, commitments, spent: new Set(nullifierLogs.map((log) => log.args.nullifier as bigint)) };
}

export interface OwnedNote {
  note: Note;
  leafIndex: number;
  nullifier: bigint;
  spent: boolean;
}

/** The notes sent to these keys: every ciphertext that opens with them and matches its commitment. */
export function findNotes(keys: AccountKeys, state: PoolState, domain: bigint): OwnedNote[] {
  const owned: OwnedNote[] = [];
  for (const c of state.commitments) {
    const note = decryptNote(keys, c.encryptedOutput, c.commitment);
    if (note === null || note.amount === 0n) continue;
    const nullifier = nullifierOf(note, c.index, keys.spendingKey, domain);
    owned.push({ note, leafIndex: c.index, nullifier, spent: state.spent.has(nullifier) });
  }
  return owned;
}
