// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice circomlibjs's generated Poseidon contracts (same parameters as circomlib's circuits).
interface IPoseidon2 {
    function poseidon(uint256[2] calldata inputs) external pure returns (uint256);
}

/// @title MerkleTreeWithHistory
/// @notice Incremental binary Poseidon2 tree with a ring of recent roots, after Tornado Cash Nova.
/// Leaves are inserted in pairs. Empty leaves are ZERO_VALUE = keccak256("tornado") % p, and
/// zeros[i+1] = Poseidon2(zeros[i], zeros[i]) (contracts-fixtures/circuits/README.md).
abstract contract MerkleTreeWithHistory {
    uint256 public constant FIELD_SIZE = 21888242871839275222246405745257275088548364400416034343698204186575808495617;
    uint256 public constant ZERO_VALUE = 21663839004416932945382355908790599225266501822907911457504978515578255421292;
    uint32 public constant ROOT_HISTORY_SIZE = 100;

    IPoseidon2 public immutable hasher;
    uint32 public immutable levels;

    /// @dev filledSubtrees[i]: the latest left node at level i; zeros[i]: the empty subtree root at level i.
    mapping(uint256 => uint256) public filledSubtrees;
    mapping(uint256 => uint256) public zeros;
    mapping(uint256 => uint256) public roots;
    uint32 public currentRootIndex;
    uint32 public nextIndex;

    error TreeFull();
    error ValueOutOfField(uint256 value);

    constructor(uint32 levels_, IPoseidon2 hasher_) {
        require(levels_ > 1 && levels_ <= 32, "levels");
        levels = levels_;
        hasher = hasher_;
        uint256 zero = ZERO_VALUE;
        for (uint32 i = 0; i < levels_; i++) {
            zeros[i] = zero;
            filledSubtrees[i] = zero;
            zero = hasher_.poseidon([zero, zero]);
        }
        roots[0] = zero;
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
        uint32 newRootIndex = (currentRootIndex + 1) % ROOT_HISTORY_SIZE;
        currentRootIndex = newRootIndex;
        roots[newRootIndex] = node;
        nextIndex = next + 2;
        return next;
    }

    /// @notice Whether the root is one of the last ROOT_HISTORY_SIZE roots.
    function isKnownRoot(uint256 root) public view returns (bool) {
        if (root == 0) return false;
        uint32 i = currentRootIndex;
        do {
            if (root == roots[i]) return true;
            i = i == 0 ? ROOT_HISTORY_SIZE - 1 : i - 1;
        } while (i != currentRootIndex);
        return false;
    }

    function getLastRoot() public view returns (uint256) {
        return roots[currentRootIndex];
    }
}
