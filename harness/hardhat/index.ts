// queue-devstack/hardhat: the Hardhat 3 plugin. `network.connect("devstack")` starts a stack (once per
// Hardhat run) and puts it on the connection, next to the viem clients of @nomicfoundation/hardhat-viem.
import "../../src/node-version-guard.ts"; // first: one line on an older Node, before anything needing 22 runs
import "./type-extensions.ts";
import type { HardhatPlugin } from "hardhat/types/plugins";

export { DEVSTACK_NETWORK } from "./names.ts";
export type { HardhatDevStack } from "./devstack.ts";
export type { PluginSnapshot } from "./stacks.ts";

/**
 * Add to hardhat.config.ts `plugins`. Nothing of the stack loads until a hook needs it: Hardhat imports
 * the handlers lazily, so other tasks pay nothing. No static import of hardhat itself either: an older
 * Node gets the guard's one line before anything fails to resolve.
 */
const queueDevstackPlugin: HardhatPlugin = {
  id: "queue-devstack",
  npmPackage: "queue-devstack",
  hookHandlers: {
    config: () => import("./config-hooks.ts"),
    configurationVariables: () => import("./variable-hooks.ts"),
    network: () => import("./network-hooks.ts"),
    test: () => import("./test-hooks.ts"),
  },
};

export default queueDevstackPlugin;
