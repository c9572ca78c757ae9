import { poseidon2 } from "poseidon-lite";
import { keccak256, stringToBytes } from "viem";
import { FIELD_SIZE } from "./field.ts";

/** Empty leaf, as in Tornado Nova and our MerkleTreeWithHistory.sol: keccak256("tornado") mod p. */
export const ZERO_VALUE = BigInt(keccak256(stringToBytes("tornado"))) % FIELD_SIZE;

/** The empty subtrees' roots, level by level, computed once a process (a Poseidon hash each). */
const zeroHashes: bigint[] = [ZERO_VALUE];
function zerosUpTo(levels: number): bigint[] {
  while (zeroHashes.length <= levels) {
    const below = zeroHashes[zeroHashes.length - 1] as bigint;
    zeroHashes.push(poseidon2([below, below]));
  }
  return zeroHashes.slice(0, levels + 1);
}

/**
 * A sparse copy of the Pool's Poseidon2 tree, rebuilt from NewCommitment events. Leaves may arrive
 * with gaps (a deposit's empty partner leaf is never announced): missing leaves are ZERO_VALUE.
 */
export class MerkleTree {
  readonly levels: number;
  readonly zeros: bigint[];
  private readonly layers: Array<Map<number, bigint>>;
  private size = 0;

  constructor(levels: number) {
    this.levels = levels;
    this.zeros = zerosUpTo(levels);
    this.layers = Array.from({ length: levels + 1 }, () => new Map<number, bigint>());
  }

  /** Number of leaf slots used (the next index the Pool will assign). */
  get nextIndex(): number {
    return this.size;
  }

  private node(level: number, index: number): bigint {
    return this.layers[level]?.get(index) ?? (this.zeros[level] as bigint);
  }

  insert(index: number, leaf: bigint): void {
    this.insertAll([{ index, leaf }]);
  }

  /**
   * Many leaves at once, as a sync rebuilds the tree: each node above them is hashed once, not once
   * per leaf below it (a tree of n leaves costs about 2n hashes, not n times the depth).
   */
  insertAll(leaves: Iterable<{ index: number; leaf: bigint }>): void {
    const list = [...leaves];
    const beyond = list.find(({ index }) => index >= 2 ** this.levels);
    if (beyond) throw new Error(`leaf index ${beyond.index} beyond a tree of depth ${this.levels}`);
    let touched = new Set<number>();
    for (const { index, leaf } of list) {
      (this.layers[0] as Map<number, bigint>).set(index, leaf);
      touched.add(index);
      this.size = Math.max(this.size, index + 1 + ((index + 1) % 2)); // leaves come in pairs
    }
    for (let level = 0; level < this.levels; level++) {
      const parents = new Set<number>();
      for (const i of touched) parents.add(i >> 1);
      for (const parent of parents) {
        (this.layers[level + 1] as Map<number, bigint>).set(parent, poseidon2([this.node(level, parent * 2), this.node(level, parent * 2 + 1)]));
      }
      touched = parents;
    }
  }

  get root(): bigint {
    return this.node(this.levels, 0);
  }

  /** Sibling hashes from the leaf level up: the circuit's inPathElements. */
  path(index: number): bigint[] {
    const out: bigint[] = [];
    for (let level = 0, i = index; level < this.levels; level++, i >>= 1) out.push(this.node(level, i ^ 1));
    return out;
  }
}
