import { createWalletClient, hexToBigInt, hexToNumber, http, isHex, type Hex, type TypedDataDefinition } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { sepoliaAt } from "../../src/chain/client.ts";
import type { DevAccount } from "../index.ts";
import { ProviderError, refusal } from "./provider-errors.ts";

/** A transaction as eth_sendTransaction takes it: quantities in hex. */
interface TransactionRequest {
  from?: Hex;
  to?: Hex | null;
  data?: Hex;
  input?: Hex;
  value?: Hex;
  gas?: Hex;
  gasLimit?: Hex;
  gasPrice?: Hex;
  maxFeePerGas?: Hex;
  maxPriorityFeePerGas?: Hex;
  nonce?: Hex;
}

/**
 * The wallet's one chain: the stack's RPC and nothing else (there is no other transport to reach). Reads
 * go to it as the app sent them; signing is done here, in the test process, with the dev account's key.
 */
export class StackChain {
  readonly #rpcUrl: string;
  #id = 0;

  constructor(rpcUrl: string) {
    this.#rpcUrl = rpcUrl;
  }

  /** Whether an EIP-3085 entry's RPC addresses name this chain's (as `/api/queue/networks` gives it). */
  isNamedBy(rpcUrls: unknown): boolean {
    const own = new URL(this.#rpcUrl).href;
    return Array.isArray(rpcUrls) && rpcUrls.some((url) => URL.canParse(String(url)) && new URL(String(url)).href === own);
  }

  /** Forwards a read, answering the node's JSON-RPC error (a revert's data included) as the provider's. */
  async forward(method: string, params: unknown): Promise<unknown> {
    const response = await fetch(this.#rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: ++this.#id, method, params }) });
    const body = (await response.json()) as { result?: unknown; error?: { code: number; message: string; data?: unknown } };
    if (body.error) throw new ProviderError(body.error);
    return body.result;
  }

  async sendTransaction(account: DevAccount, tx: TransactionRequest): Promise<Hex> {
    const client = createWalletClient({ account: privateKeyToAccount(account.privateKey), chain: sepoliaAt(this.#rpcUrl), transport: http(this.#rpcUrl) });
    const quantity = (value: Hex | undefined) => (value === undefined ? undefined : hexToBigInt(value));
    const fees =
      tx.gasPrice !== undefined ? { gasPrice: hexToBigInt(tx.gasPrice) } : { maxFeePerGas: quantity(tx.maxFeePerGas), maxPriorityFeePerGas: quantity(tx.maxPriorityFeePerGas) };
    return client.sendTransaction({
      to: tx.to ?? null,
      data: tx.data ?? tx.input,
      value: quantity(tx.value),
      gas: quantity(tx.gas ?? tx.gasLimit),
      nonce: tx.nonce === undefined ? undefined : hexToNumber(tx.nonce),
      ...fees,
    } as Parameters<typeof client.sendTransaction>[0]);
  }
}

/** personal_sign's message: hex is raw bytes, as wallets read it; anything else is text. */
export function signMessage(account: DevAccount, message: unknown): Promise<Hex> {
  if (typeof message !== "string") throw refusal("invalidParams", "personal_sign takes [message, address].");
  return privateKeyToAccount(account.privateKey).signMessage({ message: isHex(message) ? { raw: message } : message });
}

/** eth_signTypedData_v4's typed data: JSON text, or an object. */
export function parseTypedData(value: unknown): TypedDataDefinition & { domain?: { chainId?: unknown } } {
  try {
    const parsed = typeof value === "string" ? (JSON.parse(value) as unknown) : value;
    if (typeof parsed === "object" && parsed !== null && "types" in parsed && "primaryType" in parsed && "message" in parsed) return parsed as TypedDataDefinition;
  } catch {
    /* refused below */
  }
  throw refusal("invalidParams", "eth_signTypedData_v4 takes [address, typed data (JSON)].");
}

export function signTypedData(account: DevAccount, typedData: TypedDataDefinition): Promise<Hex> {
  return privateKeyToAccount(account.privateKey).signTypedData(typedData);
}

export type { TransactionRequest };
