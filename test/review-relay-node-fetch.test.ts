import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ResponseBodyTooLargeError, type BaseError } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { createChainClient } from "../src/chain/client.ts";
import { nodeFetch, VIEM_MAX_ANSWER_BYTES } from "../src/chain/node-fetch.ts";
import { chainUnavailable } from "../src/admission/refusals.ts";
import { ProblemError } from "../src/problem.ts";

// viem's http transport refuses an answer over 10 MiB while it reads fetch's body stream. nodeFetch's
// answer has no stream: the chain clients' fetch must keep that cap itself, or a node (or a proxy in
// front of a fork's RPC) that answers without end is buffered in memory until the timeout.
/** viem's http transport's maxResponseBodySize default. */
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handle);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An answer that never ends: 256 KiB every 5 ms until the client hangs up (resolves `closed`). */
function endless(headers: Record<string, string>) {
  let closed!: Promise<void>;
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    closed = new Promise((resolve) => req.socket.on("close", () => resolve()));
    res.writeHead(200, { "content-type": "application/json", ...headers });
    res.write('{"jsonrpc":"2.0","id":1,"result":"');
    const chunk = Buffer.alloc(256 * 1024, "a");
    const timer = setInterval(() => res.write(chunk), 5);
    req.socket.on("close", () => clearInterval(timer));
  };
  return { handle, closed: () => closed };
}

describe("the chain clients' nodeFetch keeps viem's cap on an answer", () => {
  it("an endless answer is refused at the cap (an outage, not a timeout) and its socket is closed", async () => {
    for (const headers of [{}, { "content-length": String(64 * VIEM_MAX_ANSWER_BYTES) }] as Array<Record<string, string>>) {
      const node = endless(headers);
      const url = await serve(node.handle);
      const error = (await createChainClient(url, { timeoutMs: 2_000, retryCount: 0 })
        .getBlockNumber()
        .catch((e: unknown) => e)) as BaseError;
      expect(error.walk((e) => e instanceof ResponseBodyTooLargeError), JSON.stringify(headers)).toBeInstanceOf(ResponseBodyTooLargeError);
      expect(chainUnavailable(error)).toBeInstanceOf(ProblemError);
      await node.closed(); // destroyed at the cap, not kept alive with the rest of the answer still coming
    }
  });

  it("the harness's nodeFetch (anvil_dumpState's answers) reads an answer over viem's cap whole", async () => {
    const big = Buffer.alloc(VIEM_MAX_ANSWER_BYTES + 1024, "b");
    const url = await serve((_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end(big));
    expect((await (await nodeFetch(url, { method: "POST", body: "{}" })).text()).length).toBe(big.length);
  });
});

// A node (or the proxy in front of it) may close an idle kept-alive socket just as the next request is
// written on it. The request then fails with no answer begun, though the node is up: the chain clients
// send it once more on a new socket (Node's http documentation's advice), rather than answer an outage.
describe("the chain clients' nodeFetch on a kept-alive socket the node closed", () => {
  /** Answers each connection's first request; a connection's second is cut unanswered. */
  async function closesReused() {
    const perSocket = new WeakMap<object, number>();
    let requests = 0;
    const url = await serve((req, res) => {
      requests++;
      const n = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, n);
      if (n > 1) return req.socket.destroy();
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c)).on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: number } | Array<{ id: number }>;
        const answer = (call: { id: number }) => ({ jsonrpc: "2.0", id: call.id, result: "0x2a" });
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body)));
      });
    });
    return { url, requests: () => requests };
  }

  it("sends the request again on a new socket, once", async () => {
    const node = await closesReused();
    const client = createChainClient(node.url, { timeoutMs: 2_000, retryCount: 0 });
    expect(await client.getBlockNumber()).toBe(42n);
    expect(await client.getBlockNumber()).toBe(42n); // the reused socket cut, then a new one
    expect(node.requests()).toBe(3);
  });

  it("the harness's nodeFetch does not (its anvil_* and evm_* calls change the chain)", async () => {
    const node = await closesReused();
    const call = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}';
    await (await nodeFetch(node.url, { method: "POST", body: call })).text();
    await expect(nodeFetch(node.url, { method: "POST", body: call })).rejects.toThrow();
    expect(node.requests()).toBe(2);
  });
});
