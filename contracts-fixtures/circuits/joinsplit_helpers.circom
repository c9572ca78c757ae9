pragma circom 2.1.0;

// Helper templates of the join-split circuit (see joinsplit.circom and README.md).
// Modelled on Tornado Cash Nova's keypair.circom and merkleProof.circom.

include "circomlib/circuits/poseidon.circom";
include "circomlib/circuits/bitify.circom";
include "circomlib/circuits/switcher.circom";

// ownerPubKey = Poseidon1(privKey)
template Keypair() {
    signal input privateKey;
    signal output publicKey;

    component hasher = Poseidon(1);
    hasher.inputs[0] <== privateKey;
    publicKey <== hasher.out;
}

// signature = Poseidon3(privKey, commitment, leafIndex)
template Signature() {
    signal input privateKey;
    signal input commitment;
    signal input leafIndex;
    signal output out;

    component hasher = Poseidon(3);
    hasher.inputs[0] <== privateKey;
    hasher.inputs[1] <== commitment;
    hasher.inputs[2] <== leafIndex;
    out <== hasher.out;
}

// Root of a binary Poseidon2 Merkle tree of depth `levels` from a leaf, its index and its
// authentication path. Bit i of leafIndex (LSB = level 0) tells on which side the running node is
// at level i: 0 = running node is the LEFT child (node = Poseidon2(node, pathElements[i])),
// 1 = running node is the RIGHT child (node = Poseidon2(pathElements[i], node)).
// Num2Bits(levels) also forces leafIndex < 2^levels, so each leaf has exactly one index (and thus
// one nullifier).
template MerkleProof(levels) {
    signal input leaf;
    signal input leafIndex;
    signal input pathElements[levels];
    signal output root;

    component indexBits = Num2Bits(levels);
    indexBits.in <== leafIndex;

    component switcher[levels];
    component hasher[levels];
    for (var i = 0; i < levels; i++) {
        switcher[i] = Switcher();
        switcher[i].L <== i == 0 ? leaf : hasher[i - 1].out;
        switcher[i].R <== pathElements[i];
        switcher[i].sel <== indexBits.out[i];

        hasher[i] = Poseidon(2);
        hasher[i].inputs[0] <== switcher[i].outL;
        hasher[i].inputs[1] <== switcher[i].outR;
    }

    root <== hasher[levels - 1].out;
}
