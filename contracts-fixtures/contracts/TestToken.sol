// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title TestToken
/// @notice A funding asset for development stacks only: anyone may mint. Never deploy to a real network.
contract TestToken is ERC20 {
    uint8 private immutable _decimals;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, address[] memory holders, uint256 amountEach)
        ERC20(name_, symbol_)
    {
        _decimals = decimals_;
        for (uint256 i = 0; i < holders.length; i++) {
            _mint(holders[i], amountEach);
        }
    }

    function decimals() public view override returns (uint8) {
        return _decimals;
    }

    /// @notice Faucet for tests and app developers.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }
}
