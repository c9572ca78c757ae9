import fc from "fast-check";
import { poseidon2 } from "poseidon-lite";
import { describe, expect, it } from "vitest";
import { MerkleTree, ZERO_VALUE } from "../harness/client/index.ts";

// The client's tree against the plainest one: every node hashed from the full leaf level up. A sync
// inserts its leaves all at once (insertAll); single inserts and a batch must give the same tree.
function reference(levels: number, leaves: Map<number, bigint>): bigint[][] {
  const layers: bigint[][] = [Array.from({ length: 2 ** levels }, (_, i) => leaves.get(i) ?? ZERO_VALUE)];
  for (let level = 0; level < levels; level++) {
    const below = layers[level] as bigint[];
    layers.push(Array.from({ length: below.length / 2 }, (_, i) => poseidon2([below[2 * i] as bigint, below[2 * i + 1] as bigint])));
  }
  return layers;
}

const LEVELS = 4;
const leafSets = fc.uniqueArray(fc.record({ index: fc.nat({ max: 2 ** LEVELS - 1 }), leaf: fc.bigInt({ min: 1n, max: 2n ** 200n }) }), { selector: (l) => l.index, maxLength: 12 });

describe("the client's Merkle tree", () => {
  it("a batch and one-by-one inserts give the reference tree's root and paths, gaps included", () => {
    fc.assert(
      fc.property(leafSets, (leaves) => {
        const expected = reference(LEVELS, new Map(leaves.map((l) => [l.index, l.leaf])));
        const batch = new MerkleTree(LEVELS);
        batch.insertAll(leaves);
        const single = new MerkleTree(LEVELS);
        for (const { index, leaf } of leaves) single.insert(index, leaf);
        for (const tree of [batch, single]) {
          expect(tree.root).toBe(expected[LEVELS]?.[0]);
          for (const { index } of leaves) {
            expect(tree.path(index)).toEqual(expected.slice(0, LEVELS).map((layer, level) => layer[(index >> level) ^ 1]));
          }
        }
        expect(batch.nextIndex).toBe(single.nextIndex);
      }),
      { numRuns: 40 },
    );
  });

  it("a batch adds to what the tree holds, and refuses an index beyond its depth before changing anything", () => {
    const tree = new MerkleTree(LEVELS);
    tree.insertAll([{ index: 0, leaf: 5n }, { index: 1, leaf: 6n }]);
    tree.insertAll([{ index: 2, leaf: 7n }]);
    expect(tree.root).toBe(reference(LEVELS, new Map([[0, 5n], [1, 6n], [2, 7n]]))[LEVELS]?.[0]);
    const before = tree.root;
    expect(() => tree.insertAll([{ index: 3, leaf: 8n }, { index: 2 ** LEVELS, leaf: 9n }])).toThrow(`leaf index ${2 ** LEVELS} beyond a tree of depth ${LEVELS}`);
    expect(tree.root).toBe(before);
    expect(tree.nextIndex).toBe(4);
  });

  it("an empty tree's root is the zero subtree's, and each tree's zeros are its own copy", () => {
    const [small, deep] = [new MerkleTree(2), new MerkleTree(20)];
    expect(small.root).toBe(poseidon2([poseidon2([ZERO_VALUE, ZERO_VALUE]), poseidon2([ZERO_VALUE, ZERO_VALUE])]));
    expect(deep.zeros).toHaveLength(21);
    (small.zeros as bigint[])[1] = 0n;
    expect(new MerkleTree(2).root).toBe(deep.zeros[2]);
  });
});
