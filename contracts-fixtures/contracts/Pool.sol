// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {AccountRegistry} from "./AccountRegistry.sol";
import {ReceiveDirectory} from "./ReceiveDirectory.sol";
import {IPoseidon2, MerkleTreeWithHistory} from "./MerkleTreeWithHistory.sol";

interface IPoseidon3 {
    function poseidon(uint256[3] calldata inputs) external pure returns (uint256);
}

interface IJoinSplitVerifier {
    function verifyProof(uint256[2] calldata a, uint256[2][2] calldata b, uint256[2] calldata c, uint256[9] calldata publicSignals)
        external
        view
        returns (bool);
}

/// @title Pool
/// @notice A small multi-asset shielded pool (Tornado Nova's join-split, 2 inputs and 2 outputs).
/// Notes are Poseidon commitments in a Merkle tree; spending one reveals its nullifier and a Groth16
/// proof. One entry point, transact(), serves private sends (extAmount = 0) and withdrawals
/// (extAmount < 0); deposits need no proof because the Pool computes the commitment itself.
/// Protocol: contracts-fixtures/circuits/README.md.
contract Pool is MerkleTreeWithHistory, ReentrancyGuard {
    using SafeERC20 for IERC20;

    /// @notice Amounts and fees stay below 2^248 so that sums cannot wrap around the field.
    uint256 public constant MAX_AMOUNT = 2 ** 248;
    /// @notice The join-split circuit's tree depth (circuits/joinsplit.circom): no proof exists for another.
    uint32 public constant TREE_DEPTH = 24;

    struct Proof {
        uint256[2] a;
        uint256[2][2] b;
        uint256[2] c;
    }

    /// @notice The proof's public inputs, in the circuit's order.
    struct PublicInputs {
        uint256 root;
        uint256 publicAmount;
        uint256 extDataHash;
        address asset;
        uint256 domain;
        uint256[2] inputNullifiers;
        uint256[2] outputCommitments;
    }

    /// @notice The execution fields a proof commits to through extDataHash.
    struct ExtData {
        address recipient;
        int256 extAmount;
        address relayer;
        uint256 fee;
        bytes encryptedOutput1;
        bytes encryptedOutput2;
    }

    /// @notice The proof domain: binds proofs to this chain and this Pool (a field element).
    uint256 public immutable domain;
    IJoinSplitVerifier public immutable verifier;
    IPoseidon3 public immutable commitmentHasher;
    AccountRegistry public immutable accountRegistry;
    ReceiveDirectory public immutable receiveDirectory;

    address[] private _assets;
    mapping(address => bool) public isSupportedAsset;
    mapping(uint256 => bool) public nullifierSpent;

    event PoolInitialized(uint256 domain, address verifier, address accountRegistry, address receiveDirectory, address[] assets);
    event NewCommitment(uint256 commitment, uint256 index, bytes encryptedOutput);
    event NewNullifier(uint256 nullifier);
    event Deposited(address indexed depositor, address indexed asset, uint256 amount, uint256 commitment, uint256 index);
    event Transacted(
        address indexed asset, address indexed recipient, address indexed relayer, int256 extAmount, uint256 fee, uint256 firstIndex
    );

    error ZeroAddress();
    error DuplicateAsset(address asset);
    error NoAssets();
    error UnsupportedAsset(address asset);
    error InvalidAmount(uint256 amount);
    error WrongDomain(uint256 expected, uint256 actual);
    error UnknownRoot(uint256 root);
    error NullifierSpent(uint256 nullifier);
    error DuplicateNullifier(uint256 nullifier);
    error ExtDataHashMismatch(uint256 expected, uint256 actual);
    error PublicAmountMismatch(uint256 expected, uint256 actual);
    error InvalidExtAmount(int256 extAmount);
    error FeeTooHigh(uint256 fee, uint256 limit);
    error RelayerMismatch(address expected, address sender);
    error InvalidRecipient();
    error WithdrawalToPool();
    error InvalidProof();

    constructor(
        IJoinSplitVerifier verifier_,
        IPoseidon2 hasher_,
        IPoseidon3 commitmentHasher_,
        AccountRegistry accountRegistry_,
        ReceiveDirectory receiveDirectory_,
        address[] memory assets_,
        uint32 levels_
    ) MerkleTreeWithHistory(levels_, hasher_) {
        if (levels_ != TREE_DEPTH) revert InvalidTreeDepth(levels_);
        if (
            address(verifier_) == address(0) || address(commitmentHasher_) == address(0) || address(accountRegistry_) == address(0)
                || address(receiveDirectory_) == address(0)
        ) revert ZeroAddress();
        if (assets_.length == 0) revert NoAssets();
        for (uint256 i = 0; i < assets_.length; i++) {
            address asset = assets_[i];
            if (asset == address(0)) revert ZeroAddress();
            if (isSupportedAsset[asset]) revert DuplicateAsset(asset);
            isSupportedAsset[asset] = true;
            _assets.push(asset);
        }
        verifier = verifier_;
        commitmentHasher = commitmentHasher_;
        accountRegistry = accountRegistry_;
        receiveDirectory = receiveDirectory_;
        domain = uint256(keccak256(abi.encode("queue-devstack.pool.v1", block.chainid, address(this)))) % FIELD_SIZE;
        emit PoolInitialized(domain, address(verifier_), address(accountRegistry_), address(receiveDirectory_), assets_);
    }

    function supportedAssets() external view returns (address[] memory) {
        return _assets;
    }

    /// @notice Deposits `amount` of `asset` as a new note. precommitment = Poseidon2(ownerPubKey, blinding)
    /// keeps the owner's key and blinding private; the Pool binds the amount and asset itself, so a note
    /// can never claim more than was paid in. The note is paired with an empty leaf.
    function deposit(address asset, uint256 amount, uint256 precommitment, bytes calldata encryptedOutput)
        external
        nonReentrant
        returns (uint256 commitment)
    {
        if (!isSupportedAsset[asset]) revert UnsupportedAsset(asset);
        if (amount == 0 || amount >= MAX_AMOUNT) revert InvalidAmount(amount);
        if (precommitment >= FIELD_SIZE) revert ValueOutOfField(precommitment);
        IERC20(asset).safeTransferFrom(msg.sender, address(this), amount);
        commitment = commitmentHasher.poseidon([amount, uint256(uint160(asset)), precommitment]);
        uint32 index = _insert(commitment, ZERO_VALUE);
        emit NewCommitment(commitment, index, encryptedOutput);
        emit Deposited(msg.sender, asset, amount, commitment, index);
    }

    /// @notice A private send (extAmount = 0) or a withdrawal (extAmount < 0) with a join-split proof.
    /// The fee is paid to ext.relayer, who must be the sender, so a fee cannot be taken by front-running.
    function transact(Proof calldata proof, PublicInputs calldata inputs, ExtData calldata ext) external nonReentrant {
        if (!isSupportedAsset[inputs.asset]) revert UnsupportedAsset(inputs.asset);
        if (inputs.domain != domain) revert WrongDomain(domain, inputs.domain);
        if (!isKnownRoot(inputs.root)) revert UnknownRoot(inputs.root);
        for (uint256 i = 0; i < 2; i++) {
            if (nullifierSpent[inputs.inputNullifiers[i]]) revert NullifierSpent(inputs.inputNullifiers[i]);
        }
        if (inputs.inputNullifiers[0] == inputs.inputNullifiers[1]) revert DuplicateNullifier(inputs.inputNullifiers[0]);
        if (ext.extAmount > 0 || ext.extAmount <= -int256(MAX_AMOUNT)) revert InvalidExtAmount(ext.extAmount);
        uint256 withdrawn = uint256(-ext.extAmount);
        if (ext.extAmount < 0 && ext.fee > withdrawn) revert FeeTooHigh(ext.fee, withdrawn);
        if (ext.fee >= MAX_AMOUNT) revert FeeTooHigh(ext.fee, MAX_AMOUNT - 1);
        if (ext.fee > 0 && ext.relayer != msg.sender) revert RelayerMismatch(ext.relayer, msg.sender);
        if (ext.extAmount < 0 && ext.recipient == address(0)) revert InvalidRecipient();
        // Tokens paid to the Pool would belong to no note: the withdrawn notes would be burnt.
        if (ext.extAmount < 0 && ext.recipient == address(this)) revert WithdrawalToPool();

        uint256 expectedHash = hashExtData(ext, inputs.asset);
        if (inputs.extDataHash != expectedHash) revert ExtDataHashMismatch(expectedHash, inputs.extDataHash);
        uint256 expectedPublicAmount = publicAmountOf(ext.extAmount, ext.fee);
        if (inputs.publicAmount != expectedPublicAmount) revert PublicAmountMismatch(expectedPublicAmount, inputs.publicAmount);
        if (!verifier.verifyProof(proof.a, proof.b, proof.c, publicSignals(inputs))) revert InvalidProof();

        for (uint256 i = 0; i < 2; i++) {
            nullifierSpent[inputs.inputNullifiers[i]] = true;
            emit NewNullifier(inputs.inputNullifiers[i]);
        }
        uint32 index = _insert(inputs.outputCommitments[0], inputs.outputCommitments[1]);
        emit NewCommitment(inputs.outputCommitments[0], index, ext.encryptedOutput1);
        emit NewCommitment(inputs.outputCommitments[1], index + 1, ext.encryptedOutput2);
        if (withdrawn > 0) IERC20(inputs.asset).safeTransfer(ext.recipient, withdrawn);
        if (ext.fee > 0) IERC20(inputs.asset).safeTransfer(ext.relayer, ext.fee);
        emit Transacted(inputs.asset, ext.recipient, ext.relayer, ext.extAmount, ext.fee, index);
    }

    /// @notice extDataHash = keccak256(abi.encode(chainid, pool, domain, asset, recipient, extAmount,
    /// relayer, fee, keccak256(encryptedOutput1), keccak256(encryptedOutput2))) mod p. Binding chain id,
    /// Pool and domain here makes a proof for another deployment fail.
    function hashExtData(ExtData calldata ext, address asset) public view returns (uint256) {
        return uint256(
            keccak256(
                abi.encode(
                    block.chainid,
                    address(this),
                    domain,
                    asset,
                    ext.recipient,
                    ext.extAmount,
                    ext.relayer,
                    ext.fee,
                    keccak256(ext.encryptedOutput1),
                    keccak256(ext.encryptedOutput2)
                )
            )
        ) % FIELD_SIZE;
    }

    /// @notice publicAmount = extAmount - fee in the field (a withdrawal is negative: p - x).
    function publicAmountOf(int256 extAmount, uint256 fee) public pure returns (uint256) {
        int256 value = extAmount - int256(fee);
        return value >= 0 ? uint256(value) : FIELD_SIZE - uint256(-value);
    }

    function publicSignals(PublicInputs calldata inputs) internal pure returns (uint256[9] memory) {
        return [
            inputs.root,
            inputs.publicAmount,
            inputs.extDataHash,
            uint256(uint160(inputs.asset)),
            inputs.domain,
            inputs.inputNullifiers[0],
            inputs.inputNullifiers[1],
            inputs.outputCommitments[0],
            inputs.outputCommitments[1]
        ];
    }
}
