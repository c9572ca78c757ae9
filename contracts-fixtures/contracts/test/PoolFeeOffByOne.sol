// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {AccountRegistry} from "../AccountRegistry.sol";
import {ReceiveDirectory} from "../ReceiveDirectory.sol";
import {IPoseidon2, MerkleTreeWithHistory} from "../MerkleTreeWithHistory.sol";
import {IActionAdapter} from "../ActionAdapters.sol";

interface IPoseidon3 {
    function poseidon(uint256[3] calldata inputs) external pure returns (uint256);
}

interface IJoinSplitVerifier {
    function verifyProof(uint256[2] calldata a, uint256[2][2] calldata b, uint256[2] calldata c, uint256[9] calldata publicSignals)
        external
        view
        returns (bool);
}

/// @title PoolFeeOffByOne: a TEST FIXTURE, the Pool with one real bug (issue 33): its fee check is off by one
/// (`extAmount <= 0` for `< 0`), so a private send that pays a fee reverts FeeTooHigh(fee, 0). Patched into
/// a stack to reproduce a failing relay, then fixed by patching Pool.sol back. Never deploy it.
/// Otherwise the Pool, line for line: the same storage layout and immutables.
/// @notice A small multi-asset shielded pool (Tornado Nova's join-split, 2 inputs and 2 outputs).
/// Notes are Poseidon commitments in a Merkle tree; spending one reveals its nullifier and a Groth16
/// proof. One entry point, transact(), serves private sends (extAmount = 0) and withdrawals
/// (extAmount < 0); deposits need no proof because the Pool computes the commitment itself.
/// Protocol: contracts-fixtures/circuits/README.md.
contract PoolFeeOffByOne is MerkleTreeWithHistory, ReentrancyGuard {
    using SafeERC20 for IERC20;

    /// @notice Amounts and fees stay below 2^248 so that sums cannot wrap around the field.
    uint256 public constant MAX_AMOUNT = 2 ** 248;
    /// @notice The join-split circuit's tree depth (circuits/joinsplit.circom): no proof exists for another.
    uint32 public constant TREE_DEPTH = 24;
    /// @notice After an action's deadline, how long its named finalizer alone may finalize it for its fee.
    uint256 public constant FINALIZE_GRACE = 1 hours;

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

    /// @notice An approved external action's terms, bound to the proof through extDataHash.
    struct Action {
        bytes32 routeId;
        address outputAsset;
        uint256 minOutput;
        /// @notice Poseidon2(ownerPubKey, blinding) of the output note: only its owner can spend the result.
        uint256 outputPrecommitment;
        /// @notice Settled by then, or refunded.
        uint64 deadline;
        /// @notice Paid, in the output asset, for finalizing a settled action.
        uint256 finalizeFee;
        bytes32 quoteId;
        /// @notice Who alone may finalize a reservation that pays a fee until deadline + FINALIZE_GRACE (the
        /// relayer that quoted it), so nobody can copy its finalize and take the fee; 0: anyone, at any time.
        address finalizer;
    }

    /// @notice Sync: the adapter's execute returns the output, always checked against the minimum.
    /// Async: the adapter settles later (Pool.settle), or the input is refunded after the deadline.
    enum RouteKind {
        Sync,
        Async
    }

    /// @notice An approved action route: its adapter, pinned to the code it had when approved, and its kind,
    /// registered by the owner (never inferred from what the adapter returns).
    struct Route {
        address adapter;
        bytes32 codeHash;
        RouteKind kind;
    }

    enum ReservationState {
        None,
        Pending,
        Settled,
        Failed,
        Finalized
    }

    /// @notice An action's output, reserved until finalize turns it (or, failed, the input) into a note.
    struct Reservation {
        bytes32 routeId;
        address inputAsset;
        uint256 amountIn;
        address outputAsset;
        uint256 minOutput;
        uint256 precommitment;
        uint64 deadline;
        uint256 finalizeFee;
        uint256 amountOut;
        /// @notice The route's adapter when the action ran: a later revocation does not strand it.
        address adapter;
        ReservationState state;
        /// @notice The action's finalizer (Action.finalizer).
        address finalizer;
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
    /// @notice Approves and revokes action routes.
    address public immutable owner;
    mapping(bytes32 => Route) public routes;
    mapping(bytes32 => Reservation) public reservations;

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
    error OnlyOwner();
    error RouteNotApproved(bytes32 routeId);
    error AdapterCodeChanged(bytes32 routeId);
    error ActionExpired(uint64 deadline);
    error BelowMinimum(uint256 amountOut, uint256 minOutput);
    error ReservationUnknown(bytes32 reservationId);
    error ReservationNotSettled(bytes32 reservationId);
    error AlreadyFinalized(bytes32 reservationId);
    error NotRouteAdapter(address sender);
    error OnlySelf();
    error FinalizerOnly(bytes32 reservationId, address finalizer, uint256 until);
    error RouteKindMismatch(bytes32 routeId, RouteKind kind, uint8 adapterKind);

    event RouteApproved(bytes32 indexed routeId, address adapter, bytes32 codeHash, RouteKind kind);
    event RouteRevoked(bytes32 indexed routeId);
    event ActionReserved(bytes32 indexed reservationId, bytes32 indexed routeId, bytes32 quoteId, address inputAsset, uint256 amountIn, address outputAsset);
    event ReservationSettled(bytes32 indexed reservationId, uint256 amountOut);
    event ReservationFailed(bytes32 indexed reservationId);
    event ReservationFinalized(bytes32 indexed reservationId, bool refunded, address asset, uint256 amount, uint256 commitment, uint256 index);

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
        owner = msg.sender;
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
        uint32 index = _spend(proof, inputs, ext, hashExtData(ext, inputs.asset));
        uint256 withdrawn = uint256(-ext.extAmount);
        if (withdrawn > 0) IERC20(inputs.asset).safeTransfer(ext.recipient, withdrawn);
        if (ext.fee > 0) IERC20(inputs.asset).safeTransfer(ext.relayer, ext.fee);
        emit Transacted(inputs.asset, ext.recipient, ext.relayer, ext.extAmount, ext.fee, index);
    }

    /// @notice An approved external action: a withdrawal paid to the route's adapter, whose terms (route,
    /// output asset, minimum, output precommitment, deadline, finalize fee, quote id, finalizer) the proof binds
    /// through extDataHash. Its output is reserved: settled at once (a synchronous route, at least the minimum,
    /// or Failed) or later by the adapter, and turned into a note by finalize(); one that cannot settle is refunded.
    /// Returns the reservation and its state after the adapter ran (what a relayer's simulation checks).
    function transactAction(Proof calldata proof, PublicInputs calldata inputs, ExtData calldata ext, Action calldata action)
        external
        nonReentrant
        returns (bytes32 reservationId, ReservationState state)
    {
        Route memory route = routes[action.routeId];
        if (route.adapter == address(0)) revert RouteNotApproved(action.routeId);
        if (route.adapter.codehash != route.codeHash) revert AdapterCodeChanged(action.routeId);
        if (ext.extAmount >= 0) revert InvalidExtAmount(ext.extAmount);
        if (ext.recipient != route.adapter) revert InvalidRecipient();
        if (block.timestamp > action.deadline) revert ActionExpired(action.deadline);
        if (!isSupportedAsset[action.outputAsset]) revert UnsupportedAsset(action.outputAsset);
        if (action.outputPrecommitment >= FIELD_SIZE) revert ValueOutOfField(action.outputPrecommitment);
        uint32 index = _spend(proof, inputs, ext, hashActionExtData(ext, inputs.asset, action));
        if (ext.fee > 0) IERC20(inputs.asset).safeTransfer(ext.relayer, ext.fee);
        emit Transacted(inputs.asset, ext.recipient, ext.relayer, ext.extAmount, ext.fee, index);

        // Distinct for every action: its nullifiers are spent exactly once.
        reservationId = keccak256(abi.encode(domain, inputs.inputNullifiers[0], inputs.inputNullifiers[1]));
        reservations[reservationId] = Reservation({
            routeId: action.routeId,
            inputAsset: inputs.asset,
            amountIn: uint256(-ext.extAmount),
            outputAsset: action.outputAsset,
            minOutput: action.minOutput,
            precommitment: action.outputPrecommitment,
            deadline: action.deadline,
            finalizeFee: action.finalizeFee,
            amountOut: 0,
            adapter: route.adapter,
            state: ReservationState.Pending,
            finalizer: action.finalizer
        });
        emit ActionReserved(reservationId, action.routeId, action.quoteId, inputs.asset, uint256(-ext.extAmount), action.outputAsset);
        // The adapter runs in a call of its own: if it fails, or a synchronous route pays less than the
        // minimum, everything it did is undone, the input stays here, and the reservation is refunded by finalize.
        try this.runAdapter(reservationId, route.kind) {}
        catch {
            reservations[reservationId].state = ReservationState.Failed;
            emit ReservationFailed(reservationId);
        }
        state = reservations[reservationId].state;
    }

    /// @notice Only the Pool itself, from transactAction: lends the input to the adapter and settles a
    /// synchronous route's output. A revert here undoes exactly this step.
    function runAdapter(bytes32 reservationId, RouteKind kind) external {
        if (msg.sender != address(this)) revert OnlySelf();
        Reservation storage r = reservations[reservationId];
        IERC20(r.inputAsset).forceApprove(r.adapter, r.amountIn);
        uint256 amountOut = IActionAdapter(r.adapter).execute(reservationId, r.inputAsset, r.amountIn, r.outputAsset);
        IERC20(r.inputAsset).forceApprove(r.adapter, 0);
        // A synchronous output is settled whatever it is, 0 included, so below the minimum it reverts and the
        // reservation is Failed (refundable at once): it never stays Pending, which only an async adapter's
        // cancel can end. An asynchronous route delivers through settle(); what execute returned is ignored.
        if (kind == RouteKind.Sync) _settle(reservationId, r, amountOut);
    }

    /// @notice An asynchronous route's adapter delivers the output (approved to the Pool) before the deadline.
    function settle(bytes32 reservationId, uint256 amountOut) external nonReentrant {
        Reservation storage r = reservations[reservationId];
        if (r.state == ReservationState.None) revert ReservationUnknown(reservationId);
        if (msg.sender != r.adapter) revert NotRouteAdapter(msg.sender);
        if (r.state != ReservationState.Pending) revert AlreadyFinalized(reservationId);
        if (block.timestamp > r.deadline) revert ActionExpired(r.deadline);
        _settle(reservationId, r, amountOut);
    }

    function _settle(bytes32 reservationId, Reservation storage r, uint256 amountOut) internal {
        if (amountOut < r.minOutput) revert BelowMinimum(amountOut, r.minOutput);
        if (amountOut >= MAX_AMOUNT) revert InvalidAmount(amountOut);
        IERC20(r.outputAsset).safeTransferFrom(r.adapter, address(this), amountOut);
        r.amountOut = amountOut;
        r.state = ReservationState.Settled;
        emit ReservationSettled(reservationId, amountOut);
    }

    /// @notice Turns a reservation into a note for its precommitment: a settled one into
    /// Poseidon3(amountOut - finalizeFee, outputAsset, precommitment), the fee paid to the caller; a failed
    /// one, or one still unsettled after its deadline (the adapter gives the input back), into a refund
    /// note of the input amount and asset, without a fee. The owner learns the amount from the event.
    /// One that pays a fee may be finalized only by the action's finalizer until deadline + FINALIZE_GRACE
    /// (FinalizerOnly), then by anyone (the finalizer may be gone: the output is never stuck).
    function finalize(bytes32 reservationId) external nonReentrant returns (uint256 commitment) {
        Reservation storage r = reservations[reservationId];
        if (r.state == ReservationState.None) revert ReservationUnknown(reservationId);
        if (r.state == ReservationState.Finalized) revert AlreadyFinalized(reservationId);
        if (r.state == ReservationState.Pending) {
            if (block.timestamp <= r.deadline) revert ReservationNotSettled(reservationId);
            IActionAdapter(r.adapter).cancel(reservationId);
            IERC20(r.inputAsset).safeTransferFrom(r.adapter, address(this), r.amountIn);
            r.state = ReservationState.Failed;
        }
        bool refunded = r.state == ReservationState.Failed;
        address asset = refunded ? r.inputAsset : r.outputAsset;
        uint256 fee = refunded ? 0 : (r.finalizeFee < r.amountOut ? r.finalizeFee : r.amountOut);
        uint256 amount = (refunded ? r.amountIn : r.amountOut) - fee;
        uint256 until = uint256(r.deadline) + FINALIZE_GRACE;
        if (fee > 0 && r.finalizer != address(0) && msg.sender != r.finalizer && block.timestamp <= until) {
            revert FinalizerOnly(reservationId, r.finalizer, until);
        }
        r.state = ReservationState.Finalized;
        commitment = commitmentHasher.poseidon([amount, uint256(uint160(asset)), r.precommitment]);
        uint32 index = _insert(commitment, ZERO_VALUE);
        emit NewCommitment(commitment, index, "");
        if (fee > 0) IERC20(asset).safeTransfer(msg.sender, fee);
        emit ReservationFinalized(reservationId, refunded, asset, amount, commitment, index);
    }

    /// @notice Approves a route of the given kind, pinning its adapter's code: a changed adapter is refused.
    /// The kind must be the one the adapter says (IActionAdapter.kind): a synchronous adapter approved as
    /// asynchronous would strand every input (its cancel cannot refund), so a mismatch is refused.
    function approveRoute(bytes32 routeId, address adapter, RouteKind kind) external {
        if (msg.sender != owner) revert OnlyOwner();
        if (adapter == address(0)) revert ZeroAddress();
        uint8 adapterKind = IActionAdapter(adapter).kind();
        if (adapterKind != uint8(kind)) revert RouteKindMismatch(routeId, kind, adapterKind);
        routes[routeId] = Route(adapter, adapter.codehash, kind);
        emit RouteApproved(routeId, adapter, adapter.codehash, kind);
    }

    function revokeRoute(bytes32 routeId) external {
        if (msg.sender != owner) revert OnlyOwner();
        delete routes[routeId];
        emit RouteRevoked(routeId);
    }

    /// @notice Every check of a join-split, then its nullifiers spent and its two outputs inserted.
    function _spend(Proof calldata proof, PublicInputs calldata inputs, ExtData calldata ext, uint256 expectedHash) internal returns (uint32 index) {
        if (!isSupportedAsset[inputs.asset]) revert UnsupportedAsset(inputs.asset);
        if (inputs.domain != domain) revert WrongDomain(domain, inputs.domain);
        if (!isKnownRoot(inputs.root)) revert UnknownRoot(inputs.root);
        for (uint256 i = 0; i < 2; i++) {
            if (nullifierSpent[inputs.inputNullifiers[i]]) revert NullifierSpent(inputs.inputNullifiers[i]);
        }
        if (inputs.inputNullifiers[0] == inputs.inputNullifiers[1]) revert DuplicateNullifier(inputs.inputNullifiers[0]);
        if (ext.extAmount > 0 || ext.extAmount <= -int256(MAX_AMOUNT)) revert InvalidExtAmount(ext.extAmount);
        uint256 withdrawn = uint256(-ext.extAmount);
        if (ext.extAmount <= 0 && ext.fee > withdrawn) revert FeeTooHigh(ext.fee, withdrawn);
        if (ext.fee >= MAX_AMOUNT) revert FeeTooHigh(ext.fee, MAX_AMOUNT - 1);
        if (ext.fee > 0 && ext.relayer != msg.sender) revert RelayerMismatch(ext.relayer, msg.sender);
        if (ext.extAmount < 0 && ext.recipient == address(0)) revert InvalidRecipient();
        // Tokens paid to the Pool would belong to no note: the withdrawn notes would be burnt.
        if (ext.extAmount < 0 && ext.recipient == address(this)) revert WithdrawalToPool();

        if (inputs.extDataHash != expectedHash) revert ExtDataHashMismatch(expectedHash, inputs.extDataHash);
        uint256 expectedPublicAmount = publicAmountOf(ext.extAmount, ext.fee);
        if (inputs.publicAmount != expectedPublicAmount) revert PublicAmountMismatch(expectedPublicAmount, inputs.publicAmount);
        if (!verifier.verifyProof(proof.a, proof.b, proof.c, publicSignals(inputs))) revert InvalidProof();

        for (uint256 i = 0; i < 2; i++) {
            nullifierSpent[inputs.inputNullifiers[i]] = true;
            emit NewNullifier(inputs.inputNullifiers[i]);
        }
        index = _insert(inputs.outputCommitments[0], inputs.outputCommitments[1]);
        emit NewCommitment(inputs.outputCommitments[0], index, ext.encryptedOutput1);
        emit NewCommitment(inputs.outputCommitments[1], index + 1, ext.encryptedOutput2);
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

    /// @notice An action's extDataHash: keccak256(abi.encode(hashExtData(ext, asset), keccak256(abi.encode(action))))
    /// mod p. The proof binds every term of the action as it binds the execution fields.
    function hashActionExtData(ExtData calldata ext, address asset, Action calldata action) public view returns (uint256) {
        return uint256(keccak256(abi.encode(hashExtData(ext, asset), keccak256(abi.encode(action))))) % FIELD_SIZE;
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
