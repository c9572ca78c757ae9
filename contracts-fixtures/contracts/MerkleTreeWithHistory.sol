// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice circomlibjs's generated Poseidon contracts (same parameters as circomlib's circuits).
interface IPoseidon2 {
    function poseidon(uint256[2] calldata inputs) external pure returns (uint256);
}

/// @title MerkleTreeWithHistory
/// @notice Incremental binary Poseidon2 tree that remembers every root it has had, after Tornado Cash
/// Nova (which keeps only a ring of recent roots). Leaves are inserted in pairs. Empty leaves are
/// ZERO_VALUE = keccak256("tornado") % p, and zeros[i+1] = Poseidon2(zeros[i], zeros[i])
/// (contracts-fixtures/circuits/README.md).
abstract contract MerkleTreeWithHistory {
    uint256 public constant FIELD_SIZE = 21888242871839275222246405745257275088548364400416034343698204186575808495617;
    uint256 public constant ZERO_VALUE = 21663839004416932945382355908790599225266501822907911457504978515578255421292;
    /// @notice 2^31 leaves at most, so that 2^levels fits the uint32 leaf index.
    uint32 public constant MAX_LEVELS = 31;

    IPoseidon2 public immutable hasher;
    uint32 public immutable levels;

    /// @dev filledSubtrees[i]: the latest left node at level i; zeros[i]: the empty subtree root at level i.
    mapping(uint256 => uint256) public filledSubtrees;
    mapping(uint256 => uint256) public zeros;
    /// @notice Every root the tree has had, numbered: the empty tree's root is 1, the root after the
    /// n-th insertion (of a pair) is n + 1; 0 = never a root. Roots never expire (PROTOCOL.md, Roots):
    /// the tree only grows, so an old root commits to leaves that are all still in it, and a burst of
    /// insertions cannot invalidate proofs in flight. One storage write per insertion, O(1) lookup.
    mapping(uint256 => uint32) public rootNumber;
    uint256 private lastRoot;
    uint32 public nextIndex;

    error TreeFull();
    error ValueOutOfField(uint256 value);
    error InvalidTreeDepth(uint32 levels);

    constructor(uint32 levels_, IPoseidon2 hasher_) {
        if (levels_ == 0 || levels_ > MAX_LEVELS) revert InvalidTreeDepth(levels_);
        levels = levels_;
        hasher = hasher_;
        uint256 zero = ZERO_VALUE;
        for (uint32 i = 0; i < levels_; i++) {
            zeros[i] = zero;
            filledSubtrees[i] = zero;
            zero = hasher_.poseidon([zero, zero]);
        }
        rootNumber[zero] = 1;
        lastRoot = zero;
    }

    function hashLeftRight(uint256 left, uint256 right) public view returns (uint256) {
        if (left >= FIELD_SIZE) revert ValueOutOfField(left);
        if (right >= FIELD_SIZE) revert ValueOutOfField(right);
        return hasher.poseidon([left, right]);
    }

    /// @dev Inserts two leaves side by side (the index of the first is even); returns that index.
    function _insert(uint256 leaf1, uint256 leaf2) internal returns (uint32 index) {
        uint32 next = nextIndex;
        if (next == uint32(2) ** levels) revert TreeFull();
        uint32 currentIndex = next / 2;
        uint256 node = hashLeftRight(leaf1, leaf2);
        for (uint32 i = 1; i < levels; i++) {
            if (currentIndex % 2 == 0) {
                filledSubtrees[i] = node;
                node = hashLeftRight(node, zeros[i]);
            } else {
                node = hashLeftRight(filledSubtrees[i], node);
            }
            currentIndex /= 2;
        }
        rootNumber[node] = next / 2 + 2;
        lastRoot = node;
        nextIndex = next + 2;
        return next;
    }

    /// @notice Whether the root is one the tree has had (any, however many insertions ago).
    function isKnownRoot(uint256 root) public view returns (bool) {
        return rootNumber[root] != 0;
    }

    function getLastRoot() public view returns (uint256) {
        return lastRoot;
    }
}
