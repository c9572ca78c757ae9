// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title AccountRegistry
/// @notice Publishes the public keys of a private-payment account: the note owner key (a field element
/// that output notes are addressed to) and the encryption key (X25519) that note openings are encrypted
/// to. Only public keys live here; the matching secrets stay with the account holder.
contract AccountRegistry {
    struct Account {
        uint256 notePublicKey;
        bytes32 encryptionPublicKey;
        uint64 registeredAt;
    }

    uint256 internal constant SNARK_SCALAR_FIELD =
        21888242871839275222246405745257275088548364400416034343698204186575808495617;

    mapping(address => Account) private _accounts;

    event AccountRegistered(address indexed account, uint256 notePublicKey, bytes32 encryptionPublicKey);

    error NotePublicKeyOutOfField(uint256 notePublicKey);
    error EmptyKey();

    /// @notice Registers or rotates the caller's keys.
    function register(uint256 notePublicKey, bytes32 encryptionPublicKey) external {
        if (notePublicKey == 0 || encryptionPublicKey == bytes32(0)) revert EmptyKey();
        if (notePublicKey >= SNARK_SCALAR_FIELD) revert NotePublicKeyOutOfField(notePublicKey);
        _accounts[msg.sender] = Account(notePublicKey, encryptionPublicKey, uint64(block.number));
        emit AccountRegistered(msg.sender, notePublicKey, encryptionPublicKey);
    }

    function accountOf(address account) external view returns (Account memory) {
        return _accounts[account];
    }

    function isRegistered(address account) external view returns (bool) {
        return _accounts[account].notePublicKey != 0;
    }
}
