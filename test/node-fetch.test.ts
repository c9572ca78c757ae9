import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { TimeoutError } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { createChainClient } from "../src/chain/client.ts";
import { nodeFetch } from "../src/chain/node-fetch.ts";
import { chainUnavailable } from "../src/admission/refusals.ts";
import { isTransportError } from "../src/chain/transport-error.ts";
import { ProblemError } from "../src/problem.ts";

// The runtime's chain clients send by nodeFetch (node:http) instead of fetch: the answers, failures and
// timeouts viem's transport makes of it must be fetch's, since the relay's outage handling reads them.
// A loopback HTTP server stands for the node here: what is tested is HTTP, not the chain.
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});
async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handle);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
const rpcAnswer = (req: IncomingMessage, res: ServerResponse, result: (call: { id: number; method: string }) => unknown) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c)).on("end", () => {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: number; method: string } | Array<{ id: number; method: string }>;
    const answer = Array.isArray(body) ? body.map((c) => ({ jsonrpc: "2.0", id: c.id, result: result(c) })) : { jsonrpc: "2.0", id: body.id, result: result(body) };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
  });
};

describe("nodeFetch, the chain clients' fetch", () => {
  it("answers calls and batches over one kept-alive connection", async () => {
    const sockets = new Set<unknown>();
    const url = await serve((req, res) => {
      sockets.add(req.socket);
      rpcAnswer(req, res, (call) => (call.method === "eth_blockNumber" ? "0x2a" : "0x1"));
    });
    const client = createChainClient(url, { timeoutMs: 2_000, retryCount: 0 });
    expect(await client.getBlockNumber()).toBe(42n);
    const [block, count] = await Promise.all([client.getBlockNumber(), client.getTransactionCount({ address: "0x0000000000000000000000000000000000000001" })]);
    expect([block, count]).toEqual([42n, 1]);
    expect(sockets.size).toBe(1);
  });

  it("gives status, headers and body as fetch does", async () => {
    const url = await serve((_req, res) => res.writeHead(503, "Busy", { "content-type": "text/plain", "retry-after": "2" }).end("try later"));
    const answer = await nodeFetch(url, { method: "POST", body: "{}" });
    expect([answer.status, answer.ok, answer.statusText, answer.headers.get("Retry-After"), answer.headers.get("x-none"), await answer.text()]).toEqual([503, false, "Busy", "2", null, "try later"]);
  });

  it("parses a JSON answer with json(), as fetch does", async () => {
    const url = await serve((_req, res) => res.writeHead(202, { "content-type": "application/json" }).end('{"id":"op_1","n":[1,2]}'));
    const answer = await nodeFetch(new URL("/x?id=1", url), { headers: { accept: "application/json" } });
    expect([answer.status, answer.ok, await answer.json()]).toEqual([202, true, { id: "op_1", n: [1, 2] }]);
  });

  it("a refused connection, a cut answer and a timeout are outages (chain_unavailable), and a timed-out request is closed", async () => {
    const refused = await serve(() => {});
    await new Promise((resolve) => servers.pop()?.close(resolve));
    const cut = await serve((req) => req.socket.destroy());
    let closed!: Promise<void>;
    const silent = await serve((req) => {
      closed = new Promise((resolve) => req.socket.on("close", () => resolve()));
    });
    for (const url of [refused, cut, silent]) {
      const error = await createChainClient(url, { timeoutMs: 300, retryCount: 0 }).getBlockNumber().catch((e: unknown) => e);
      expect(isTransportError(error), url).toBe(true);
      expect(chainUnavailable(error)).toBeInstanceOf(ProblemError);
      if (url === silent) expect((error as Error).name).toBe(new TimeoutError({ body: {}, url }).name);
    }
    await closed; // the silent server's socket: destroyed by the abort, not left open
  });
});
