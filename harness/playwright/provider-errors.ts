import { BaseError } from "viem";

/** EIP-1193's provider error codes, and JSON-RPC's invalid params, as the test wallet answers them. */
export const PROVIDER_ERRORS = {
  userRejected: { code: 4001, message: "User rejected the request." },
  unauthorized: { code: 4100, message: "The requested account and/or method has not been authorized by the user." },
  unsupportedMethod: { code: 4200, message: "The test wallet does not support this method." },
  disconnected: { code: 4900, message: "The provider is disconnected from all chains." },
  chainDisconnected: { code: 4901, message: "The provider is not connected to the requested chain." },
  unrecognizedChain: { code: 4902, message: "Unrecognized chain ID." },
  invalidParams: { code: -32602, message: "Invalid params." },
} as const;

/** An answer of the wallet that crosses to the page as data: a binding loses an Error's code. */
export interface ProviderErrorData {
  code: number;
  message: string;
  data?: unknown;
}

/** A refusal with EIP-1193's shape (`code`, `message`, `data`), thrown in the test process and re-thrown in the page. */
export class ProviderError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor({ code, message, data }: ProviderErrorData) {
    super(message);
    this.name = "ProviderError";
    this.code = code;
    this.data = data;
  }

  toData(): ProviderErrorData {
    return { code: this.code, message: this.message, ...(this.data === undefined ? {} : { data: this.data }) };
  }
}

/** One of EIP-1193's refusals, its message followed by why. */
export function refusal(kind: keyof typeof PROVIDER_ERRORS, why?: string): ProviderError {
  const { code, message } = PROVIDER_ERRORS[kind];
  return new ProviderError({ code, message: why === undefined ? message : `${message} ${why}` });
}

/**
 * What the page is told of a failure: a ProviderError as it is; a viem error as the node's JSON-RPC
 * error in its causes (a revert's code 3 and data, say); anything else as an internal error.
 */
export function errorData(error: unknown): ProviderErrorData {
  if (error instanceof ProviderError) return error.toData();
  if (error instanceof BaseError) {
    const rpc = error.walk((cause) => typeof (cause as { code?: unknown }).code === "number") as (BaseError & { code: number; data?: unknown }) | null;
    if (rpc !== null) return { code: rpc.code, message: rpc.details || rpc.shortMessage, ...(rpc.data === undefined ? {} : { data: rpc.data }) };
    return { code: -32603, message: error.shortMessage };
  }
  return { code: -32603, message: error instanceof Error ? error.message : String(error) };
}
