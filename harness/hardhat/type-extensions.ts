// What the plugin adds to Hardhat's types: `devstack` in the config (the stack's options) and on every
// network connection (the stack itself on the devstack network). ChainType and DefaultChainType are
// named through import(), not the augmented module's scope: without hardhat installed, the package's
// types then miss a module (as any optional peer's), not a global name.
import type { DevStackOptions } from "../index.ts";
import type { HardhatDevStack } from "./devstack.ts";

declare module "hardhat/types/config" {
  interface HardhatUserConfig {
    /** Options of the stack the devstack network starts (default: a local stack on free ports, in a temp dir). */
    devstack?: DevStackOptions;
  }
  interface HardhatConfig {
    devstack: DevStackOptions;
  }
}

declare module "hardhat/types/network" {
  interface NetworkConnection<ChainTypeT extends import("hardhat/types/network").ChainType | string = import("hardhat/types/network").DefaultChainType> {
    /** The stack behind the devstack network; reading it on another network throws. */
    devstack: HardhatDevStack;
  }
}
