// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

// PLACEHOLDER until scripts/build-circuits.ts generates the real Groth16 verifier here. Rejects every proof.
contract JoinSplitVerifier {
    function verifyProof(uint256[2] calldata, uint256[2][2] calldata, uint256[2] calldata, uint256[9] calldata) external pure returns (bool) {
        return false;
    }
}
