import { poseidon2 } from "poseidon-lite";
import { keccak256, stringToBytes } from "viem";
import { FIELD_SIZE } from "./field.ts";

/** Empty leaf, as in Tornado Nova and our MerkleTreeWithHistory.sol: keccak256("tornado") mod p. */
export const ZERO_VALUE = BigInt(keccak256(stringToBytes("tornado"))) % FIELD_SIZE;

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
    this.zeros = [ZERO_VALUE];
    for (let i = 0; i < levels; i++) this.zeros.push(poseidon2([this.zeros[i] as bigint, this.zeros[i] as bigint]));
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
    if (index >= 2 ** this.levels) throw new Error(`leaf index ${index} beyond a tree of depth ${this.levels}`);
    (this.layers[0] as Map<number, bigint>).set(index, leaf);
    let i = index;
    for (let level = 0; level < this.levels; level++) {
      const parent = i >> 1;
      const left = this.node(level, parent * 2);
      const right = this.node(level, parent * 2 + 1);
      (this.layers[level + 1] as Map<number, bigint>).set(parent, poseidon2([left, right]));
      i = parent;
    }
    this.size = Math.max(this.size, index + 1 + ((index + 1) % 2)); // leaves come in pairs
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
