// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";

/// @notice An approved action route's adapter, as the Pool calls it. The Pool approves `amountIn` of
/// `assetIn` before `execute`; the adapter takes it. On a route the Pool registered as synchronous, execute
/// returns the output (approving the Pool to take `amountOut` of `assetOut`), checked against the minimum;
/// on an asynchronous one, it settles later through Pool.settle (what execute returns is ignored).
interface IActionAdapter {
    function execute(bytes32 reservationId, address assetIn, uint256 amountIn, address assetOut) external returns (uint256 amountOut);

    /// @notice The output expected for `amountIn` now (what a quote offers); reverts when there is no price.
    function quote(address assetIn, address assetOut, uint256 amountIn) external view returns (uint256);

    /// @notice An unsettled action past its deadline: give the input back (approve the Pool to take it).
    function cancel(bytes32 reservationId) external;

    /// @notice How this adapter delivers (Pool.RouteKind): 0 synchronous (execute returns the output), 1
    /// asynchronous (it settles later). The Pool approves a route only of the kind its adapter says.
    function kind() external view returns (uint8);
}

interface ITestToken {
    function mint(address to, uint256 amount) external;
}

interface IActionPool {
    function settle(bytes32 reservationId, uint256 amountOut) external;
}

/// @notice A price per pair of test assets, set by the harness: what quotes offer and swaps pay.
abstract contract PricedAdapter is IActionAdapter {
    address public immutable pool;
    address public immutable priceSetter;
    /// @notice Output base units per 1e18 input base units, per (assetIn, assetOut).
    mapping(address => mapping(address => uint256)) public price;

    event PriceSet(address indexed assetIn, address indexed assetOut, uint256 price);

    error OnlyPool();
    error OnlyPriceSetter();
    error PriceNotSet(address assetIn, address assetOut);

    constructor(address pool_, address priceSetter_) {
        pool = pool_;
        priceSetter = priceSetter_;
    }

    function setPrice(address assetIn, address assetOut, uint256 price_) external {
        if (msg.sender != priceSetter) revert OnlyPriceSetter();
        price[assetIn][assetOut] = price_;
        emit PriceSet(assetIn, assetOut, price_);
    }

    function quote(address assetIn, address assetOut, uint256 amountIn) public view returns (uint256) {
        uint256 p = price[assetIn][assetOut];
        if (p == 0) revert PriceNotSet(assetIn, assetOut);
        return amountIn * p / 1e18;
    }
}

/// @title SwapAdapter
/// @notice A synchronous swap between the test assets at a price the harness sets (development only: it
/// mints the output, as anyone may mint the test tokens).
contract SwapAdapter is PricedAdapter {
    using SafeERC20 for IERC20;

    error NothingToCancel(bytes32 reservationId);

    constructor(address pool_, address priceSetter_) PricedAdapter(pool_, priceSetter_) {}

    /// @notice Synchronous: execute returns the output.
    function kind() external pure returns (uint8) {
        return 0;
    }

    function execute(bytes32, address assetIn, uint256 amountIn, address assetOut) external returns (uint256 amountOut) {
        if (msg.sender != pool) revert OnlyPool();
        amountOut = quote(assetIn, assetOut, amountIn);
        IERC20(assetIn).safeTransferFrom(pool, address(this), amountIn);
        ITestToken(assetOut).mint(address(this), amountOut);
        IERC20(assetOut).forceApprove(pool, amountOut);
    }

    /// @notice A synchronous swap is never left unsettled.
    function cancel(bytes32 reservationId) external pure {
        revert NothingToCancel(reservationId);
    }
}

/// @title FillAdapter
/// @notice An asynchronous fill: the input is held until a filler the harness controls delivers the
/// output (Pool.settle), or never does, and the action is refunded after its deadline. Its quotes use
/// the price the filler (also its price setter) sets.
contract FillAdapter is PricedAdapter {
    using SafeERC20 for IERC20;

    struct Order {
        address assetIn;
        uint256 amountIn;
        address assetOut;
        bool open;
    }

    address public immutable filler;
    mapping(bytes32 => Order) public orders;

    event OrderOpened(bytes32 indexed reservationId, address assetIn, uint256 amountIn, address assetOut);
    event OrderFilled(bytes32 indexed reservationId, uint256 amountOut);
    event OrderCancelled(bytes32 indexed reservationId);

    error OnlyFiller();
    error OrderNotOpen(bytes32 reservationId);

    constructor(address pool_, address filler_) PricedAdapter(pool_, filler_) {
        filler = filler_;
    }

    /// @notice Asynchronous: the filler settles later, or the action is refunded after its deadline.
    function kind() external pure returns (uint8) {
        return 1;
    }

    function execute(bytes32 reservationId, address assetIn, uint256 amountIn, address assetOut) external returns (uint256) {
        if (msg.sender != pool) revert OnlyPool();
        IERC20(assetIn).safeTransferFrom(pool, address(this), amountIn);
        orders[reservationId] = Order(assetIn, amountIn, assetOut, true);
        emit OrderOpened(reservationId, assetIn, amountIn, assetOut);
        return 0;
    }

    /// @notice Delivers `amountOut` of the order's output asset to the Pool (development: minted).
    function fill(bytes32 reservationId, uint256 amountOut) external {
        if (msg.sender != filler) revert OnlyFiller();
        Order storage order = orders[reservationId];
        if (!order.open) revert OrderNotOpen(reservationId);
        order.open = false;
        ITestToken(order.assetOut).mint(address(this), amountOut);
        IERC20(order.assetOut).forceApprove(pool, amountOut);
        emit OrderFilled(reservationId, amountOut);
        IActionPool(pool).settle(reservationId, amountOut);
    }

    function cancel(bytes32 reservationId) external {
        if (msg.sender != pool) revert OnlyPool();
        Order storage order = orders[reservationId];
        if (!order.open) revert OrderNotOpen(reservationId);
        order.open = false;
        IERC20(order.assetIn).forceApprove(pool, order.amountIn);
        emit OrderCancelled(reservationId);
    }
}
