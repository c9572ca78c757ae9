// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AccountRegistry} from "./AccountRegistry.sol";

/// @title ReceiveDirectory
/// @notice Maps human-readable receive handles (keccak256 of a name) to registered accounts, so a payer
/// can resolve "alice" to the keys an output note is encrypted and addressed to. First come, first served;
/// the owner may release or transfer a handle.
contract ReceiveDirectory {
    AccountRegistry public immutable accountRegistry;

    mapping(bytes32 => address) private _owners;

    event HandleClaimed(bytes32 indexed handle, address indexed owner);
    event HandleReleased(bytes32 indexed handle, address indexed owner);

    error HandleTaken(bytes32 handle, address owner);
    error NotHandleOwner(bytes32 handle);
    error AccountNotRegistered(address account);

    constructor(AccountRegistry registry) {
        accountRegistry = registry;
    }

    function claim(bytes32 handle) external {
        address owner = _owners[handle];
        if (owner != address(0)) revert HandleTaken(handle, owner);
        if (!accountRegistry.isRegistered(msg.sender)) revert AccountNotRegistered(msg.sender);
        _owners[handle] = msg.sender;
        emit HandleClaimed(handle, msg.sender);
    }

    function release(bytes32 handle) external {
        if (_owners[handle] != msg.sender) revert NotHandleOwner(handle);
        delete _owners[handle];
        emit HandleReleased(handle, msg.sender);
    }

    /// @notice The account behind a handle and its published keys (zero values when unclaimed).
    function resolve(bytes32 handle) external view returns (address owner, AccountRegistry.Account memory account) {
        owner = _owners[handle];
        if (owner != address(0)) account = accountRegistry.accountOf(owner);
    }
}
