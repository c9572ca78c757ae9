pragma circom 2.1.0;

// Join-split (2-in / 2-out) transaction circuit of the queue-devstack shielded pool.
// Design after Tornado Cash Nova's transaction.circom, made multi-asset and domain-bound.
// The protocol (every formula, the public-input order) is specified in README.md next to this
// file; keep the two in sync. Build with `node --experimental-strip-types scripts/build-circuits.ts`.
//
//   ownerPubKey   = Poseidon1(privKey)
//   precommitment = Poseidon2(ownerPubKey, blinding)
//   commitment    = Poseidon3(amount, asset, precommitment)
//   signature     = Poseidon3(privKey, commitment, leafIndex)
//   nullifier     = Poseidon4(commitment, leafIndex, signature, domain)

include "circomlib/circuits/poseidon.circom";
include "circomlib/circuits/bitify.circom";
include "circomlib/circuits/comparators.circom";
include "joinsplit_helpers.circom";

template JoinSplit(levels, nIns, nOuts) {
    // ---- public inputs: declared in EXACTLY the order of snarkjs publicSignals / the Solidity
    // ---- verifier's input array (circom orders public inputs by declaration, not by the main's list).
    signal input root;
    signal input publicAmount;      // extAmount - fee mod p
    signal input extDataHash;       // uint256(keccak256(abi.encode(extData))) % p
    signal input asset;             // ERC-20 address as a field element; shared by all notes of the proof
    signal input domain;            // Pool-chosen field element, mixed into every nullifier
    signal input inputNullifier[nIns];
    signal input outputCommitment[nOuts];

    // ---- private inputs
    signal input inAmount[nIns];
    signal input inPrivateKey[nIns];
    signal input inBlinding[nIns];
    signal input inLeafIndex[nIns];              // leaf index in the tree; bit i = path index at level i
    signal input inPathElements[nIns][levels];   // siblings, level 0 (leaf level) first

    signal input outAmount[nOuts];
    signal input outPrecommitment[nOuts];        // Poseidon2(recipientPubKey, blinding), computed off-circuit

    component inKeypair[nIns];
    component inPrecommitmentHasher[nIns];
    component inCommitmentHasher[nIns];
    component inSignature[nIns];
    component inNullifierHasher[nIns];
    component inTree[nIns];
    component inCheckRoot[nIns];
    var sumIns = 0;

    for (var tx = 0; tx < nIns; tx++) {
        inKeypair[tx] = Keypair();
        inKeypair[tx].privateKey <== inPrivateKey[tx];

        inPrecommitmentHasher[tx] = Poseidon(2);
        inPrecommitmentHasher[tx].inputs[0] <== inKeypair[tx].publicKey;
        inPrecommitmentHasher[tx].inputs[1] <== inBlinding[tx];

        inCommitmentHasher[tx] = Poseidon(3);
        inCommitmentHasher[tx].inputs[0] <== inAmount[tx];
        inCommitmentHasher[tx].inputs[1] <== asset;
        inCommitmentHasher[tx].inputs[2] <== inPrecommitmentHasher[tx].out;

        inSignature[tx] = Signature();
        inSignature[tx].privateKey <== inPrivateKey[tx];
        inSignature[tx].commitment <== inCommitmentHasher[tx].out;
        inSignature[tx].leafIndex <== inLeafIndex[tx];

        inNullifierHasher[tx] = Poseidon(4);
        inNullifierHasher[tx].inputs[0] <== inCommitmentHasher[tx].out;
        inNullifierHasher[tx].inputs[1] <== inLeafIndex[tx];
        inNullifierHasher[tx].inputs[2] <== inSignature[tx].out;
        inNullifierHasher[tx].inputs[3] <== domain;
        inNullifierHasher[tx].out === inputNullifier[tx];

        // Also range-checks inLeafIndex < 2^levels (Num2Bits inside MerkleProof), for dummies too.
        inTree[tx] = MerkleProof(levels);
        inTree[tx].leaf <== inCommitmentHasher[tx].out;
        inTree[tx].leafIndex <== inLeafIndex[tx];
        for (var i = 0; i < levels; i++) {
            inTree[tx].pathElements[i] <== inPathElements[tx][i];
        }

        // The Merkle root is only checked for non-zero amounts: a zero-amount input is a dummy
        // (random key and blinding, any leafIndex < 2^levels, any path) that carries no value.
        inCheckRoot[tx] = ForceEqualIfEnabled();
        inCheckRoot[tx].in[0] <== root;
        inCheckRoot[tx].in[1] <== inTree[tx].root;
        inCheckRoot[tx].enabled <== inAmount[tx];

        // Input amounts are not range-checked: a non-dummy input is a note of the tree, whose amount
        // was range-checked as an output of an earlier proof, or by the Pool on deposit (< 2^248).
        sumIns += inAmount[tx];
    }

    component outCommitmentHasher[nOuts];
    component outAmountCheck[nOuts];
    var sumOuts = 0;

    for (var tx = 0; tx < nOuts; tx++) {
        outCommitmentHasher[tx] = Poseidon(3);
        outCommitmentHasher[tx].inputs[0] <== outAmount[tx];
        outCommitmentHasher[tx].inputs[1] <== asset;
        outCommitmentHasher[tx].inputs[2] <== outPrecommitment[tx];
        outCommitmentHasher[tx].out === outputCommitment[tx];

        // outAmount < 2^248, so that sums cannot wrap around the field.
        outAmountCheck[tx] = Num2Bits(248);
        outAmountCheck[tx].in <== outAmount[tx];

        sumOuts += outAmount[tx];
    }

    // No nullifier twice in one proof.
    component sameNullifiers[nIns * (nIns - 1) / 2];
    var index = 0;
    for (var i = 0; i < nIns - 1; i++) {
        for (var j = i + 1; j < nIns; j++) {
            sameNullifiers[index] = IsEqual();
            sameNullifiers[index].in[0] <== inputNullifier[i];
            sameNullifiers[index].in[1] <== inputNullifier[j];
            sameNullifiers[index].out === 0;
            index++;
        }
    }

    // Value conservation (in the field; publicAmount = extAmount - fee mod p).
    sumIns + publicAmount === sumOuts;

    // Bind the public inputs that no other constraint uses. (domain is already bound through the
    // nullifiers; its square is a redundant belt-and-braces, as Nova does for extDataHash.)
    signal extDataSquare <== extDataHash * extDataHash;
    signal domainSquare <== domain * domain;
}

// LEVELS = 24: the build script reads this line (and patches it for candidate depths).
component main {public [root, publicAmount, extDataHash, asset, domain, inputNullifier, outputCommitment]} = JoinSplit(24, 2, 2);
