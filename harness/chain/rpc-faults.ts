import { Agent, createServer, request, type ClientRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { getAddress, parseTransaction, toFunctionSelector, type Address, type Hex } from "viem";
import { jsonRpc } from "./json-rpc.ts";
import { listenOnLoopback } from "./loopback-server.ts";

/**
 * What the runtime's RPC does wrong, for a while: fail (HTTP 503), time out (no answer), answer late,
 * lose logs (eth_getLogs answers [], receipts carry no logs), or lack some methods (answered as a node
 * without them answers). anvil has no chaos mode of its own.
 */
export type RpcFaultKind = "fail" | "timeout" | "delay" | "drop-logs" | "unsupported";

export interface RpcFaultSpec {
  kind: RpcFaultKind;
  /** For "delay": how late each answer comes (default 1000 ms). */
  delayMs?: number;
  /** Only these JSON-RPC methods misbehave (default: all; "unsupported" needs them). */
  methods?: readonly string[];
  /** The fault ends by itself after this long (default: when cleared). */
  forMs?: number;
}

export interface RpcFaultState {
  fault: RpcFaultKind | "none";
  delayMs: number | null;
  methods: string[] | null;
  /** When the fault ends by itself (ISO 8601), or null. */
  endsAt: string | null;
  /** The Pool's verifier rejects the next relay broadcast: it is mined, and reverts InvalidProof(). */
  revertNextRelay: boolean;
}

export interface RpcFaultProxy {
  /** Loopback URL the runtime talks to instead of anvil's. */
  url: string;
  /** anvil's URL and the deployment, once anvil is up (the proxy listens before, so its URL is known while anvil boots). */
  connect(args: { anvilUrl: string; pool: Address; verifier: Address }): void;
  set(fault: RpcFaultSpec | null): RpcFaultState;
  /** Another deployment whose relays revert-next applies to (the alternate one a config switch serves). */
  addDeployment(pool: Address, verifier: Address): void;
  /** Arms (or disarms) the next relay's revert. */
  revertNextRelay(armed: boolean): RpcFaultState;
  state(): RpcFaultState;
  /** No fault, nothing armed: what a snapshot revert or a reset goes back to. */
  clear(): void;
  close(): Promise<void>;
}

interface RpcCall {
  id?: unknown;
  method?: unknown;
  params?: unknown[];
}

/** Verifier runtime code that answers false to every proof: the Pool then reverts InvalidProof(). */
const REJECTING_VERIFIER: Hex = "0x600060005260206000f3";
const FINALIZE_SELECTOR = toFunctionSelector("finalize(bytes32)");

/**
 * An in-process JSON-RPC proxy between the queue runtime and anvil, through which a dev stack's faults
 * are injected. Without a fault it forwards every request as it came; the harness's own controls talk
 * to anvil directly, so a fault never stops a control that would end it.
 */
export async function startRpcFaultProxy(): Promise<RpcFaultProxy> {
  // Pool -> its verifier, for every deployment the stack serves.
  const verifiers = new Map<Address, Address>();
  let anvil: URL | null = null;
  let fault: (RpcFaultSpec & { endsAt: number | null }) | null = null;
  let revertArmed = false;
  // Wakes requests held by a "timeout" or "delay" fault when it ends.
  let faultEnded = deferred();
  // While the verifier is swapped for one relay, every other request waits: nothing else may see it.
  let swap: Promise<void> | null = null;

  const active = (calls: RpcCall[]): (RpcFaultSpec & { endsAt: number | null }) | null => {
    if (fault && fault.endsAt !== null && Date.now() >= fault.endsAt) setFault(null);
    if (!fault) return null;
    const methods = fault.methods;
    return methods === undefined || calls.some((call) => methods.includes(String(call.method))) ? fault : null;
  };
  let endTimer: NodeJS.Timeout | undefined;
  function setFault(next: RpcFaultSpec | null): void {
    clearTimeout(endTimer);
    fault = next === null ? null : { ...next, endsAt: next.forMs === undefined ? null : Date.now() + next.forMs };
    faultEnded.resolve();
    faultEnded = deferred();
    if (next?.forMs !== undefined) endTimer = setTimeout(() => setFault(null), next.forMs).unref();
  }
  const state = (): RpcFaultState => {
    active([]);
    return {
      fault: fault?.kind ?? "none",
      delayMs: fault?.kind === "delay" ? (fault.delayMs ?? 1000) : null,
      methods: fault?.methods ? [...fault.methods] : null,
      endsAt: fault?.endsAt ? new Date(fault.endsAt).toISOString() : null,
      revertNextRelay: revertArmed,
    };
  };

  // node:http on kept-alive sockets rather than fetch: every RPC of the runtime crosses this proxy, and
  // fetch's machinery cost a relay burst a tenth of its main thread.
  const agent = new Agent({ keepAlive: true });
  const upstream = (onAnswer: (answer: IncomingMessage) => void): ClientRequest => {
    // Nothing calls before connect(): the runtime's first call is its deployment check, once anvil is up.
    if (anvil === null) throw new Error("the fault proxy is not connected to anvil yet");
    return request({ agent, host: anvil.hostname, port: anvil.port, method: "POST", path: anvil.pathname, headers: { "content-type": "application/json" } }, onAnswer);
  };
  const send = (body: Buffer): Promise<{ status: number; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const call = upstream((answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("end", () => resolve({ status: answer.statusCode ?? 502, body: Buffer.concat(chunks) }));
        answer.on("error", reject);
      });
      call.on("error", reject);
      call.end(body);
    });
  /** No fault and nothing armed: the request goes through untouched, never parsed. */
  const pass = (req: IncomingMessage, res: ServerResponse): Promise<void> =>
    new Promise((resolve, reject) => {
      const call = upstream((answer) => {
        res.writeHead(answer.statusCode ?? 502, { "content-type": "application/json" });
        answer.pipe(res);
        answer.on("end", resolve);
        answer.on("error", reject);
      });
      call.on("error", reject);
      req.pipe(call);
    });

  /** The verifier of the Pool this call relays a proof to (not a finalize, which has none), if it is one. */
  const relayVerifier = (calls: RpcCall[]): Address | undefined => {
    for (const call of calls) {
      if (call.method !== "eth_sendRawTransaction" || typeof call.params?.[0] !== "string") continue;
      try {
        const tx = parseTransaction(call.params[0] as Hex);
        const verifier = tx.to ? verifiers.get(getAddress(tx.to)) : undefined;
        if (verifier && tx.data && !tx.data.startsWith(FINALIZE_SELECTOR)) return verifier;
      } catch {
        /* not a transaction anvil would take either */
      }
    }
    return undefined;
  };

  /**
   * The relay is mined in a block whose verifier rejects every proof, then the verifier is put back. The
   * blocks on either side make the rejection part of the chain's history: the runtime's replay of the
   * call at that block, and a trace, see what the transaction saw.
   */
  async function sendRejected(body: Buffer, verifier: Address): Promise<{ status: number; body: Buffer }> {
    const rpc = <T>(method: string, params: unknown[] = []) => jsonRpc<T>((anvil as URL).href, method, params);
    const original = await rpc<Hex>("eth_getCode", [verifier, "latest"]);
    await rpc("anvil_setCode", [verifier, REJECTING_VERIFIER]);
    try {
      await rpc("evm_mine");
      const answer = await send(body);
      const parsed = JSON.parse(answer.body.toString("utf8")) as { result?: Hex } | Array<{ result?: Hex }>;
      const hash = (Array.isArray(parsed) ? parsed.find((a) => a.result)?.result : parsed.result) ?? null;
      if (hash !== null) {
        revertArmed = false;
        // Mining held? The relay's block is mined now anyway, while the verifier still rejects.
        if ((await rpc<unknown>("eth_getTransactionReceipt", [hash])) === null) await rpc("evm_mine");
      }
      return answer;
    } finally {
      await rpc("anvil_setCode", [verifier, original]);
      await rpc("evm_mine");
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    while (swap) await swap;
    if (!fault && !revertArmed) return pass(req, res);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let calls: RpcCall[] = [];
    let parsedBody: unknown;
    try {
      parsedBody = JSON.parse(body.toString("utf8")) as unknown;
      calls = (Array.isArray(parsedBody) ? parsedBody : [parsedBody]) as RpcCall[];
    } catch {
      /* anvil answers what it cannot parse */
    }
    while (swap) await swap;
    const now = active(calls);
    if (now?.kind === "fail") {
      const error = { jsonrpc: "2.0", id: calls[0]?.id ?? null, error: { code: -32603, message: "queue-devstack fault: the RPC is failing" } };
      res.writeHead(503, { "content-type": "application/json" }).end(JSON.stringify(error));
      return;
    }
    if (now?.kind === "timeout") {
      // No answer at all while the fault lasts; then the connection is cut, still without one.
      const closed = new Promise<void>((resolve) => res.once("close", () => resolve()));
      await Promise.race([faultEnded.promise, closed]);
      res.destroy();
      return;
    }
    // Late by delayMs, or until the fault ends (switched off, changed, a reset): never later than the fault lasts.
    if (now?.kind === "delay") {
      const ended = new AbortController();
      void faultEnded.promise.then(() => ended.abort());
      await sleep(now.delayMs ?? 1000, undefined, { signal: ended.signal }).catch(() => {});
    }
    let answer: { status: number; body: Buffer };
    const verifier = revertArmed ? relayVerifier(calls) : undefined;
    if (now?.kind === "unsupported") {
      answer = await withoutMethods(calls, Array.isArray(parsedBody), now.methods ?? [], send);
    } else if (verifier) {
      const done = sendRejected(body, verifier);
      swap = done.then(
        () => undefined,
        () => undefined,
      );
      try {
        answer = await done;
      } finally {
        swap = null;
      }
    } else {
      answer = await send(body);
    }
    if (active(calls)?.kind === "drop-logs") answer = { ...answer, body: withoutLogs(calls, answer.body) };
    res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body);
  }

  const server = createServer((req, res) =>
    void handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32603, message: "anvil did not answer" } }));
      else res.destroy();
    }),
  );
  server.keepAliveTimeout = 60_000;
  const listening = await listenOnLoopback(server);
  return {
    url: listening.url,
    connect(args) {
      anvil = new URL(args.anvilUrl);
      verifiers.set(getAddress(args.pool), args.verifier);
    },
    set(next) {
      if (next?.kind === "unsupported" && !next.methods?.length) throw new TypeError("the unsupported fault needs methods: the JSON-RPC methods the node lacks");
      setFault(next);
      return state();
    },
    addDeployment(pool, verifier) {
      verifiers.set(getAddress(pool), verifier);
    },
    revertNextRelay(armed) {
      revertArmed = armed;
      return state();
    },
    state,
    clear() {
      setFault(null);
      revertArmed = false;
    },
    close: async () => {
      setFault(null);
      await listening.close();
      agent.destroy();
    },
  };
}

/**
 * The calls of these methods answered as a node without them answers (geth's -32601), the others of the
 * request sent on to anvil: a provider that lacks a method, say eth_getBlockReceipts.
 */
async function withoutMethods(
  calls: RpcCall[],
  batch: boolean,
  methods: readonly string[],
  send: (body: Buffer) => Promise<{ status: number; body: Buffer }>,
): Promise<{ status: number; body: Buffer }> {
  const lacking = (call: RpcCall) => methods.includes(String(call.method));
  const forwarded = calls.filter((call) => !lacking(call));
  let status = 200;
  let answers: unknown[] = [];
  if (forwarded.length > 0) {
    const answer = await send(Buffer.from(JSON.stringify(batch ? forwarded : forwarded[0])));
    status = answer.status;
    const parsed = JSON.parse(answer.body.toString("utf8")) as unknown;
    answers = Array.isArray(parsed) ? parsed : [parsed];
  }
  // anvil answers a batch in its order: the forwarded calls' answers, in turn.
  let next = 0;
  const out = calls.map((call) =>
    lacking(call) ? { jsonrpc: "2.0", id: call.id ?? null, error: { code: -32601, message: `the method ${String(call.method)} does not exist/is not available` } } : answers[next++],
  );
  return { status, body: Buffer.from(JSON.stringify(batch ? out : out[0])) };
}

/** eth_getLogs answers nothing, and receipts carry no logs: a provider that lost them. */
function withoutLogs(calls: RpcCall[], body: Buffer): Buffer {
  try {
    const parsed = JSON.parse(body.toString("utf8")) as unknown;
    const answers = (Array.isArray(parsed) ? parsed : [parsed]) as Array<{ id?: unknown; result?: unknown }>;
    for (const answer of answers) {
      const method = (calls.length === 1 ? calls[0] : calls.find((c) => c.id === answer.id))?.method;
      if (method === "eth_getLogs" && Array.isArray(answer.result)) answer.result = [];
      const receipts = method === "eth_getTransactionReceipt" ? [answer.result] : method === "eth_getBlockReceipts" && Array.isArray(answer.result) ? answer.result : [];
      for (const receipt of receipts) if (receipt && typeof receipt === "object") (receipt as { logs?: unknown[] }).logs = [];
    }
    return Buffer.from(JSON.stringify(Array.isArray(parsed) ? answers : answers[0]));
  } catch {
    return body;
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
