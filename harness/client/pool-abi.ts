// The Pool's ABI lives with the runtime (src/), which submits transactions and decodes their errors.
export { poolAbi } from "../../src/chain/pool-abi.ts";
