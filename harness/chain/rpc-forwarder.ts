import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { RpcCache } from "./rpc-cache.ts";
import { listenOnLoopback } from "./loopback-server.ts";

interface RpcCall {
  id?: unknown;
  method: string;
  params?: unknown[];
}

/** What anvil read from the fork upstream: the state and blocks a fork bundle must carry. */
export interface ForkReads {
  accounts: Set<string>;
  /** Storage slots read, by lowercase address. */
  slots: Map<string, Set<string>>;
  /** Upstream blocks read (header fields as the upstream answered them), by number. */
  blocks: Map<number, Record<string, unknown>>;
}

export interface RpcForwarder {
  /** Loopback URL that carries no credentials: what anvil is given as its --fork-url. */
  url: string;
  /** What anvil has read through this forwarder so far. */
  reads: ForkReads;
  close(): Promise<void>;
}

/**
 * A loopback JSON-RPC forwarder, owned by the stack, between anvil and a fork upstream. anvil's command
 * line is readable by every local user (`ps`) and its --config-out records the fork URL, so anvil is
 * given this forwarder's URL, and the upstream's credentials (userinfo, path or query keys) stay in
 * this process's memory. Userinfo becomes a Basic Authorization header (fetch refuses it in a URL).
 *
 * It listens only on 127.0.0.1 and lives as long as the stack. While it runs, a local user can send
 * requests through it (as they can to anvil itself), but never learns the credential.
 */
export async function startRpcForwarder(upstreamUrl: string, options: { timeoutMs?: number; cache?: RpcCache } = {}): Promise<RpcForwarder> {
  const target = new URL(upstreamUrl);
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (target.username || target.password) {
    const userinfo = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
    headers.authorization = `Basic ${Buffer.from(userinfo).toString("base64")}`;
    target.username = "";
    target.password = "";
  }
  const upstream = target.toString();
  const timeoutMs = options.timeoutMs ?? 60_000;

  const reads: ForkReads = { accounts: new Set(), slots: new Map(), blocks: new Map() };
  const note = (call: RpcCall, result: unknown) => {
    const [address, slot] = (call.params ?? []) as [unknown, unknown];
    if (typeof address !== "string") return;
    if (["eth_getAccountInfo", "eth_getBalance", "eth_getTransactionCount", "eth_getCode", "eth_getStorageAt"].includes(call.method)) reads.accounts.add(address.toLowerCase());
    if (call.method === "eth_getStorageAt" && typeof slot === "string") {
      const slots = reads.slots.get(address.toLowerCase()) ?? new Set<string>();
      reads.slots.set(address.toLowerCase(), slots.add(slot));
    }
    if ((call.method === "eth_getBlockByNumber" || call.method === "eth_getBlockByHash") && result && typeof result === "object") {
      const block = result as { number?: string };
      if (typeof block.number === "string") reads.blocks.set(Number(block.number), block);
    }
  };
  const server = createServer((req, res) => void forward(req, res));
  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const cache = options.cache;
    const { calls, batch } = parseCalls(body);
    try {
      const answer = await fetch(upstream, { method: "POST", headers, body, signal: AbortSignal.timeout(timeoutMs) });
      const answerBody = Buffer.from(await answer.arrayBuffer());
      // Every immutable answer is kept: the upstream is asked first, so a changed upstream never serves stale state.
      if (calls && answer.ok) remember(calls, answerBody);
      res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" }).end(answerBody);
    } catch {
      // The upstream is unreachable: immutable answers it gave before still hold (a replay without the network).
      // A batch is answered call by call: what was kept, and an error for each call that was not.
      if (cache && calls && calls.length > 0 && (batch || cache.get(calls[0] as RpcCall) !== undefined)) {
        const answers = calls.map((call) => {
          const result = cache.get(call);
          if (result === undefined) return { jsonrpc: "2.0", id: call.id ?? null, error: { code: -32603, message: "the fork upstream did not answer" } };
          note(call, result);
          return { jsonrpc: "2.0", id: call.id ?? null, result };
        });
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(batch ? answers : answers[0]));
        return;
      }
      // Never echo the upstream's URL or error text: either may carry the credential.
      const error = { jsonrpc: "2.0", id: null, error: { code: -32603, message: "the fork upstream did not answer" } };
      if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" }).end(JSON.stringify(error));
    }
  }

  function parseCalls(body: Buffer): { calls: RpcCall[] | null; batch: boolean } {
    try {
      const parsed = JSON.parse(body.toString("utf8")) as unknown;
      return Array.isArray(parsed) ? { calls: parsed as RpcCall[], batch: true } : { calls: [parsed as RpcCall], batch: false };
    } catch {
      return { calls: null, batch: false };
    }
  }

  function remember(calls: RpcCall[], answerBody: Buffer): void {
    try {
      const parsed = JSON.parse(answerBody.toString("utf8")) as unknown;
      const answers = (Array.isArray(parsed) ? parsed : [parsed]) as Array<{ id?: unknown; result?: unknown; error?: unknown }>;
      for (const call of calls) {
        const answer = calls.length === 1 ? answers[0] : answers.find((a) => a.id === call.id);
        if (!answer || answer.error !== undefined) continue;
        note(call, answer.result);
        options.cache?.put(call, answer.result);
      }
    } catch {
      /* not JSON: nothing to keep */
    }
  }

  const listening = await listenOnLoopback(server);
  return {
    url: listening.url,
    reads,
    close: async () => {
      await listening.close();
      await options.cache?.flush();
    },
  };
}
