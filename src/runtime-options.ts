import type { FastifyServerOptions } from "fastify";
import type { Hex } from "viem";
import type { RelaySettings } from "./config/relay-settings.ts";
import type { CorsOrigins } from "./cors.ts";
import type { TrustProxy } from "./client-address.ts";
import type { RateLimit } from "./protection.ts";
import type { QuoteSettings } from "./quote/quoter.ts";

export interface QueueRuntimeOptions {
  /** The manifest file's bytes (what GET /config serves). */
  manifest: Uint8Array;
  /** The chain the runtime reads and writes. May carry credentials: it is never served or logged. */
  rpcUrl: string;
  /** The RPC clients and wallets are told to use (networks route). Defaults to rpcUrl without credentials. */
  publicRpcUrl?: string;
  /** Block explorer for the networks route; null for a chain without one. */
  explorerUrl?: string | null;
  /** The chain's name in the networks route (and so in a wallet). Default "Sepolia"; a local chain says it is local. */
  chainName?: string;
  /** Browser origins allowed to call the queue (CORS): exact origins, and "loopback" for any localhost port. Default: none. */
  corsOrigins?: CorsOrigins;
  /** Folder holding the proof files the manifest lists (queue.proof.artifacts). */
  artifactsDir: string;
  /** The key the runtime relays with; its address must be the manifest's relayFees.relayer. */
  relayerPrivateKey?: Hex;
  /** The operation store: a SQLite file (durable), or ":memory:" (the default). */
  store?: string;
  /** Relayer behaviour; defaults suit a dev chain. */
  relay?: Partial<RelaySettings>;
  /** Quote validity, settle window and slippage of external actions (defaults: 120 s, 600 s, 50 bps). */
  quotes?: Partial<QuoteSettings>;
  /**
   * Per-client limit on relays, quotes and finalizes (429 rate_limited); default 60 a minute; false: none
   * (a dev stack's default, so a test suite never trips it).
   */
  rateLimit?: RateLimit | false;
  /**
   * The reverse proxies in front (Fastify's trustProxy), by their addresses and CIDRs; a hop count or
   * `true` is refused (TrustProxyError: see TrustProxy). The client they name in X-Forwarded-For is then
   * the one every per-client limit counts; without it, every client behind a proxy is the proxy, and one
   * of them uses up all their limits. Default: none trusted.
   */
  trustProxy?: TrustProxy;
  /**
   * The node's WebSocket URL (may carry credentials, never served or logged): new blocks are followed by
   * subscription (eth_subscribe newHeads) besides the relayer's poll, so it sees them at once.
   */
  wsRpcUrl?: string;
  /** Skip checking the manifest against the chain at start (only for tests of the check itself). */
  skipDeploymentCheck?: boolean;
  logger?: FastifyServerOptions["logger"];
  /** Largest request body accepted, in bytes. */
  bodyLimit?: number;
  /** A request (headers and body) not received in full within this is answered 408 request_timeout. Default 30000. */
  requestTimeoutMs?: number;
  /** Headers not received in full within this are answered 408 request_timeout (at most requestTimeoutMs). Default 10000. */
  headersTimeoutMs?: number;
  /**
   * The chain reads a request waits for (a submission's checks, /assets) answer within this as a whole,
   * or the request is a 503 chain_unavailable with Retry-After. Default 3000. The engine's own calls
   * time out after `relay.rpcTimeoutMs`; status answers never wait on the chain.
   */
  chainTimeoutMs?: number;
}

export const DEFAULT_CHAIN_TIMEOUT_MS = 3_000;

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;

export function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer, got ${String(value)}`);
  return value;
}
