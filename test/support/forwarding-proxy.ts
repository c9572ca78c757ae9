import { createServer, request as httpRequest } from "node:http";

/**
 * A reverse proxy on a loopback port, forwarding every request to `target` as nginx does with
 * `proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for`: the client's own X-Forwarded-For, if
 * any, with the address the client connected from appended.
 */
export async function startForwardingProxy(target: string): Promise<{ url: string; close: () => Promise<void> }> {
  const { hostname, port } = new URL(target);
  const server = createServer((req, res) => {
    const forwarded = req.headers["x-forwarded-for"];
    const headers = { ...req.headers, "x-forwarded-for": `${forwarded ? `${forwarded}, ` : ""}${req.socket.remoteAddress}` };
    const upstream = httpRequest({ host: hostname, port, path: req.url, method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** POST a JSON body from a loopback address of its own (127.0.0.2, …): a client of its own, as the proxy sees it. */
export const postFrom = (localAddress: string, url: string, body: unknown, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; body: { code?: string } }>((resolve, reject) => {
    const { hostname, port, pathname } = new URL(url);
    const req = httpRequest({ host: hostname, port, path: pathname, method: "POST", localAddress, headers: { "content-type": "application/json", ...headers } }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString())).on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { code?: string } }));
    });
    req.on("error", reject).end(JSON.stringify(body));
  });
