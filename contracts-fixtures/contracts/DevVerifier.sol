// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title DevVerifier
/// @notice DEVELOPMENT ONLY: the verifier of a stack started with dev proofs (`--proofs dev`). It has
/// JoinSplitVerifier's interface and accepts only a dev proof: `a = [DEV_PROOF_TAG, h]`, `b` and `c`
/// zero, where `h = keccak256(abi.encode(address(this), block.chainid, publicSignals))` binds this
/// verifier, the chain and every public input in order. It checks no circuit: the client computed
/// the full witness (every constraint) but proved nothing. A Groth16 verifier refuses every dev proof
/// by construction: the tag is above the BN254 base field modulus, so `a` is not a curve point and
/// the pairing precompile fails.
contract DevVerifier {
    /// keccak256("queue-devstack.dev-proof.v1") with its top bit set: always >= the base field modulus q.
    uint256 public constant DEV_PROOF_TAG = uint256(keccak256("queue-devstack.dev-proof.v1")) | (1 << 255);
    /// The scalar field: a public signal at or above it is refused, as JoinSplitVerifier does.
    uint256 internal constant R = 21888242871839275222246405745257275088548364400416034343698204186575808495617;

    function verifyProof(uint256[2] calldata a, uint256[2][2] calldata b, uint256[2] calldata c, uint256[9] calldata publicSignals)
        external
        view
        returns (bool)
    {
        for (uint256 i = 0; i < 9; i++) {
            if (publicSignals[i] >= R) return false;
        }
        // One form only: anything in b or c makes another proof of the same statement.
        if (a[0] != DEV_PROOF_TAG || b[0][0] | b[0][1] | b[1][0] | b[1][1] | c[0] | c[1] != 0) return false;
        return a[1] == uint256(keccak256(abi.encode(address(this), block.chainid, publicSignals)));
    }
}
