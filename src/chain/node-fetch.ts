import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { ResponseBodyTooLargeError } from "viem";

// Kept-alive sockets, shared by every chain client of the process (as fetch's global pool is). Node
// unrefs a kept socket while it is free: an idle client keeps no process alive.
const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/** The answer's headers, as viem's transport reads them (Content-Type, Content-Length, Retry-After). */
class AnswerHeaders {
  private readonly raw: IncomingHttpHeaders;
  constructor(raw: IncomingHttpHeaders) {
    this.raw = raw;
  }
  get(name: string): string | null {
    const value = this.raw[name.toLowerCase()];
    return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
  }
  has(name: string): boolean {
    return this.raw[name.toLowerCase()] !== undefined;
  }
}

/**
 * fetch for viem's http transport (its fetchFn) on node:http: the runtime's JSON-RPC calls are small and
 * many, and undici's fetch costs this process about twice node:http's CPU per call (measured per
 * eth_blockNumber: 230–310 µs against 110–160 µs). It answers what the transport reads: status, ok,
 * statusText, headers, text(), and json() (bench:relay's queue client polls by it). A failure of the way (refused, reset) rejects, as fetch does, and viem
 * names it an HttpRequestError; an abort (viem's timeout) destroys the request.
 */
export const nodeFetch = fetchWithin(Number.POSITIVE_INFINITY);

/**
 * viem's http transport's cap on an answer (its maxResponseBodySize default, 10 MiB). viem enforces it
 * while it reads a fetch Response's body stream; nodeFetch's answer has no stream (its text() is read
 * whole), so an endless or huge answer would be buffered until the timeout. The chain clients' chainFetch
 * cuts the socket at the cap instead, with viem's own error (an outage, as under fetch).
 */
export const VIEM_MAX_ANSWER_BYTES = 10_485_760;

/**
 * nodeFetch for viem's transport: an answer over VIEM_MAX_ANSWER_BYTES is refused and its socket
 * destroyed; and a request a kept-alive socket failed with no answer begun (the node closed the idle
 * socket as it was reused) is sent once more on a new one, as Node's http documentation advises. Safe
 * for the runtime's calls: reads, and eth_sendRawTransaction, whose repeat the node knows by its hash.
 * Not for nodeFetch: the harness's anvil_* and evm_* calls change the chain.
 */
export const chainFetch = fetchWithin(VIEM_MAX_ANSWER_BYTES, { resendOnReusedReset: true });

/** How a kept-alive socket the node closed fails the request written on it. */
const RESET_CODES = new Set(["ECONNRESET", "EPIPE"]);

function fetchWithin(maxAnswerBytes: number, { resendOnReusedReset = false } = {}): typeof fetch {
  return ((input: string | URL, init: RequestInit = {}) =>
    new Promise<Response>((resolve, reject) => {
      nodeFetchHooks.onRequest?.(String(input), typeof init.body === "string" ? init.body : "");
      const signal = init.signal ?? undefined;
      if (signal?.aborted) return reject(signal.reason as Error);
      const url = typeof input === "string" ? new URL(input) : input;
      const https = url.protocol === "https:";
      const send = (again: boolean) => {
        let answered = false;
        const call = (https ? httpsRequest : httpRequest)(
          url,
          { method: init.method ?? "GET", headers: init.headers as Record<string, string>, agent: https ? agents.https : agents.http },
          (answer) => {
            answered = true;
            const chunks: Buffer[] = [];
            let size = 0;
            const tooLarge = (bytes: number) => {
              signal?.removeEventListener("abort", onAbort);
              const error = new ResponseBodyTooLargeError({ maxSize: maxAnswerBytes, size: bytes });
              reject(error);
              call.destroy(error); // not kept alive: the rest of the answer would follow the next request
            };
            const declared = Number(answer.headers["content-length"]);
            if (declared > maxAnswerBytes) return tooLarge(declared);
            answer.on("data", (chunk: Buffer) => {
              size += chunk.length;
              if (size > maxAnswerBytes) return tooLarge(size);
              chunks.push(chunk);
            });
            answer.on("error", reject);
            answer.on("close", () => {
              if (!answer.complete) reject(new Error("the connection closed before the answer was complete"));
            });
            answer.on("end", () => {
              signal?.removeEventListener("abort", onAbort);
              const text = Buffer.concat(chunks).toString("utf8");
              const status = answer.statusCode ?? 0;
              resolve({ status, ok: status >= 200 && status < 300, statusText: answer.statusMessage ?? "", headers: new AnswerHeaders(answer.headers), body: null, text: async () => text, json: async () => JSON.parse(text) as unknown } as unknown as Response);
            });
          },
        );
        const onAbort = () => call.destroy(signal?.reason as Error);
        signal?.addEventListener("abort", onAbort, { once: true });
        call.on("error", (error: NodeJS.ErrnoException) => {
          signal?.removeEventListener("abort", onAbort);
          if (resendOnReusedReset && !again && !answered && call.reusedSocket && RESET_CODES.has(error.code ?? "") && !signal?.aborted) return send(true);
          reject(error);
        });
        call.end(typeof init.body === "string" ? init.body : undefined);
      };
      send(false);
    })) as typeof fetch;
}

/** Benchmarks only (bench:relay's BENCH_RPC_COUNT): told every request nodeFetch sends. Never set by the runtime itself. */
export const nodeFetchHooks: { onRequest?: (url: string, body: string) => void } = {};
