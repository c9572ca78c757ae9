/** The network the plugin adds (unless the config defines one of that name itself). */
export const DEVSTACK_NETWORK = "devstack";

/**
 * The configuration variable holding the devstack network's URL: the plugin answers it by starting the
 * stack, so Hardhat creates the connection's provider only once anvil listens. Hardhat reads an
 * environment variable of that name first: leave it unset.
 */
export const RPC_URL_VARIABLE = "QUEUE_DEVSTACK_HARDHAT_RPC_URL";
