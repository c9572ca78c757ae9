// The chain: anvil (its binary, start and stop), a fork's upstream (fork point, the credential-free
// forwarder and its cache), the fault proxy between the runtime and anvil, the saver of a persisted
// chain, plain JSON-RPC for anvil's dev methods, and the check that the stack's ports (anvil's and the
// runtime's) are free before a start. Parts: fork upstream, chain, saver, faults.
export { forkUpstreamPart, chainPart, saverPart, faultsPart, connectFaults, anvilIndexOf, type ForkUpstream, type ForkCapture, type StackChain } from "./parts.ts";
export { startChain, ChainStartError, AnvilExitedError, CHAIN_ID, ANVIL_RUN_DIR_PREFIX, type Chain, type DevAccount } from "./chain.ts";
export { anvilBinaryPath } from "./anvil-binary.ts";
export { decodeDump, encodeDump, dropStrayBlocks, dropStrayBlocksInDump, withoutStrayBlocks, type DumpedChain } from "./stray-blocks.ts";
export { ForkUpstreamError, resolveForkPoint, type ForkPoint } from "./fork.ts";
export type { ForkReads } from "./rpc-forwarder.ts";
export { openRpcCache, DEFAULT_FORK_CACHE_DIR, type RpcCache } from "./rpc-cache.ts";
export type { RpcFaultProxy, RpcFaultSpec, RpcFaultState } from "./rpc-faults.ts";
export { jsonRpc, jsonRpcBatch, JsonRpcError } from "./json-rpc.ts";
export { checkPortsFree, PortInUseError, type PortRole } from "./ports.ts";
