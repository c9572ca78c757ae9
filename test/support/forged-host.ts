import { request } from "node:http";

/**
 * An HTTP request to a stack under a Host header of our choosing, as a page on a domain rebound to
 * 127.0.0.1 would send it (fetch does not let a caller set Host), with the headers a browser adds.
 */
export function requestWithHost(url: string, host: string, options: { method?: "GET" | "POST"; body?: unknown; text?: string; headers?: Record<string, string> } = {}) {
  const { hostname, port, pathname, search } = new URL(url);
  // A text/plain body is what a page's no-cors POST may carry (no preflight); other headers as a browser sets them (Origin, Sec-Fetch-Site).
  const type = options.body !== undefined ? { "content-type": "application/json" } : options.text !== undefined ? { "content-type": "text/plain" } : {};
  const headers = { host, ...type, ...options.headers };
  return new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
    const req = request({ host: hostname, port, method: options.method ?? "GET", path: `${pathname}${search}`, headers }, (res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"]), body: text }));
    });
    req.once("error", reject);
    req.end(options.body === undefined ? options.text : JSON.stringify(options.body));
  });
}
