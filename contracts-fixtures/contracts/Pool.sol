// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AccountRegistry} from "./AccountRegistry.sol";
import {ReceiveDirectory} from "./ReceiveDirectory.sol";

/// @title Pool
/// @notice Settles private payments in a fixed set of ERC-20 funding assets. Every companion the
/// queue runtime's configuration names is readable from here, so a pinned Pool describes itself.
contract Pool {
    uint256 internal constant SNARK_SCALAR_FIELD =
        21888242871839275222246405745257275088548364400416034343698204186575808495617;

    /// @notice The proof domain: binds proofs to this chain and this Pool (a field element).
    uint256 public immutable domain;
    address public immutable verifier;
    AccountRegistry public immutable accountRegistry;
    ReceiveDirectory public immutable receiveDirectory;

    address[] private _assets;
    mapping(address => bool) public isSupportedAsset;

    event PoolInitialized(uint256 domain, address verifier, address accountRegistry, address receiveDirectory, address[] assets);

    error ZeroAddress();
    error DuplicateAsset(address asset);
    error NoAssets();

    constructor(address verifier_, AccountRegistry accountRegistry_, ReceiveDirectory receiveDirectory_, address[] memory assets_) {
        if (verifier_ == address(0) || address(accountRegistry_) == address(0) || address(receiveDirectory_) == address(0)) {
            revert ZeroAddress();
        }
        if (assets_.length == 0) revert NoAssets();
        for (uint256 i = 0; i < assets_.length; i++) {
            address asset = assets_[i];
            if (asset == address(0)) revert ZeroAddress();
            if (isSupportedAsset[asset]) revert DuplicateAsset(asset);
            isSupportedAsset[asset] = true;
            _assets.push(asset);
        }
        verifier = verifier_;
        accountRegistry = accountRegistry_;
        receiveDirectory = receiveDirectory_;
        domain = uint256(keccak256(abi.encode("queue-devstack.pool.v1", block.chainid, address(this)))) % SNARK_SCALAR_FIELD;
        emit PoolInitialized(domain, verifier_, address(accountRegistry_), address(receiveDirectory_), assets_);
    }

    function supportedAssets() external view returns (address[] memory) {
        return _assets;
    }
}
