import { ContractFunctionRevertedError, ExecutionRevertedError, HttpRequestError, RawContractError, ResponseBodyTooLargeError, RpcRequestError, SocketClosedError, TimeoutError, WebSocketRequestError, BaseError } from "viem";

/** viem's errors of the way to the node (no answer, a cut connection, the node's own failure), not of what was asked. */
const TRANSPORT_ERRORS = [HttpRequestError, TimeoutError, WebSocketRequestError, SocketClosedError, ResponseBodyTooLargeError, RpcRequestError];

/** The node's answer "it reverts" (EIP-1474 code 3, or viem's decoded revert): the question's fault, never an outage. */
const isRevert = (e: unknown) => e instanceof ContractFunctionRevertedError || e instanceof ExecutionRevertedError || e instanceof RawContractError || (e instanceof RpcRequestError && e.code === 3);

/**
 * JSON-RPC codes by which a node refuses the question itself (EIP-1474: malformed, unknown or unsupported
 * method, invalid params): asked again, it is refused again, so it is no outage to retry. -32005 (limit
 * exceeded) is not among them: providers also answer it to a rate limit, which passes.
 */
const REFUSED_QUESTION = new Set([-32700, -32600, -32601, -32602, -32004]);
const isRefusedQuestion = (e: unknown) => e instanceof RpcRequestError && REFUSED_QUESTION.has(e.code);

export function isTransportError(error: unknown): boolean {
  if (!(error instanceof BaseError) || error.walk(isRevert) !== null || error.walk(isRefusedQuestion) !== null) return false;
  return error.walk((e) => TRANSPORT_ERRORS.some((type) => e instanceof type)) !== null;
}

