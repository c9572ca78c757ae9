import { connect, type Socket } from "node:net";
import { Writable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { CIRCUIT_BUILD_DIR, manifestBytes } from "../harness/deployment/index.ts";
import { buildQueueRuntime, codeChanges, type QueueRuntimeOptions } from "../src/server.ts";
import { RELAYER_KEY } from "./support/chain.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// A review of the HTTP layer reworked for speed (issue 32, item 3): each case failed before its fix.
let stack: DevStack;
withQueueStack({ client: false }, (started) => ({ stack } = started));

const apps: FastifyInstance[] = [];
afterAll(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/** A runtime of its own on the stack's chain, listening on a free port. */
async function runtime(options: Partial<QueueRuntimeOptions> = {}, before?: (app: FastifyInstance) => void) {
  const app = await buildQueueRuntime({ manifest: manifestBytes(stack.manifest), rpcUrl: stack.rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR, ...options });
  apps.push(app);
  before?.(app);
  await app.listen({ host: "127.0.0.1", port: 0 });
  const port = (app.server.address() as { port: number }).port;
  return { app, port, base: `http://127.0.0.1:${port}` };
}

/** One request written as is (or by `request`); the answer's status line and headers (lower-case names). */
function exchange(port: number, request: string | ((socket: Socket) => void)): Promise<{ status: number; headers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.on("data", (chunk) => (text += chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const [head = ""] = text.split("\r\n\r\n");
      const [statusLine = "", ...lines] = head.split("\r\n");
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
      resolve({ status: Number(statusLine.split(" ")[1]), headers });
    });
    if (typeof request === "string") socket.write(request);
    else request(socket);
  });
}

describe("GET config after a code change (a patch)", () => {
  it("answers the new bytes with their own ETag, and a 304 for that ETag, not for the old one", async () => {
    const { app, base } = await runtime();
    const before = await fetch(`${base}/api/queue/config`);
    const oldEtag = before.headers.get("etag") as string;
    await before.arrayBuffer();
    // The same deployment and code hashes in other bytes: a code change the runtime accepts.
    const bytes = Buffer.from(JSON.stringify(stack.manifest, null, 4));
    await codeChanges(app)?.accept(bytes, []);
    const after = await fetch(`${base}/api/queue/config`);
    expect(Buffer.from(await after.arrayBuffer()).equals(bytes)).toBe(true);
    const newEtag = after.headers.get("etag");
    expect(newEtag).not.toBe(oldEtag);
    expect((await fetch(`${base}/api/queue/config`, { headers: { "if-none-match": String(newEtag) } })).status).toBe(304);
    const stale = await fetch(`${base}/api/queue/config`, { headers: { "if-none-match": oldEtag } });
    expect(stale.status).toBe(200);
    expect(stale.headers.get("etag")).toBe(newEtag);
  });
});

describe("If-None-Match on config and proof files", () => {
  it("is 304 for the ETag weakly (W/), in a list, or *; 200 for a list without it", async () => {
    const { base } = await runtime();
    const verificationKey = stack.manifest.queue.proof.artifacts.find((artifact) => artifact.role === "verificationKey");
    for (const path of ["/api/queue/config", verificationKey?.path as string]) {
      const first = await fetch(`${base}${path}`);
      await first.arrayBuffer();
      const etag = first.headers.get("etag") as string;
      for (const header of [etag, `W/${etag}`, `"other", ${etag}`, `"other",W/${etag} `, "*"]) {
        const answer = await fetch(`${base}${path}`, { headers: { "if-none-match": header } });
        expect({ header, status: answer.status, etag: answer.headers.get("etag") }).toEqual({ header, status: 304, etag });
      }
      const other = await fetch(`${base}${path}`, { headers: { "if-none-match": `"other", W/"also-other"` } });
      expect(other.status).toBe(200);
      await other.arrayBuffer();
    }
  });
});

describe("HEAD on the docs app's pages (made on first request)", () => {
  it("says the length of what GET answers", async () => {
    const { base } = await runtime();
    for (const path of ["/api/queue/docs/", "/api/queue/docs/static/swagger-ui.css"]) {
      const body = Buffer.from(await (await fetch(`${base}${path}`)).arrayBuffer());
      const head = await fetch(`${base}${path}`, { method: "HEAD" });
      expect({ path, status: head.status, length: head.headers.get("content-length") }).toEqual({ path, status: 200, length: String(body.length) });
    }
  });
});

describe("request.log, made on its first line", () => {
  it("has every member of the logger Fastify would have made: bindings(), flush(), custom levels, on a child too", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({ write: (chunk, _encoding, done) => done(void lines.push(JSON.parse(String(chunk)))) });
    const { base } = await runtime({ logger: { level: "info", stream, customLevels: { audit: 35 } } as never }, (app) => {
      // A plugin's route using pino's own members on request.log.
      app.get("/review/log", (request, reply) => {
        const log = request.log as unknown as { bindings(): Record<string, unknown>; flush(): void; isLevelEnabled(level: string): boolean; audit(message: string): void; child(b: object): { bindings(): Record<string, unknown> } };
        log.audit("audited");
        log.flush();
        reply.send({ bindings: log.bindings(), child: log.child({ step: "inner" }).bindings(), audit: log.isLevelEnabled("audit") });
      });
    });
    const answer = await fetch(`${base}/review/log`);
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { bindings: { reqId: string }; child: Record<string, unknown>; audit: boolean };
    expect(body).toEqual({ bindings: { reqId: expect.stringMatching(/^req-/) }, child: { reqId: body.bindings.reqId, step: "inner" }, audit: true });
    expect(lines.find((line) => line.msg === "audited")).toMatchObject({ level: 35, reqId: body.bindings.reqId });
  });
});

describe("a malformed URL (a Fastify framework error)", () => {
  it("is answered with the headers and CORS of every answer, and counted in /metrics", async () => {
    const { port, base } = await runtime({ corsOrigins: ["https://app.example"] });
    const answer = await exchange(port, "GET /api/queue/artifacts/%E0%A4%A HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\nConnection: close\r\n\r\n");
    expect(answer.status).toBe(400);
    expect(answer.headers["content-type"]).toContain("application/problem+json");
    expect(answer.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(answer.headers["x-content-type-options"]).toBe("nosniff");
    expect(answer.headers.vary).toBe("Origin");
    expect(answer.headers["access-control-allow-origin"]).toBe("https://app.example");
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('queue_http_requests_total{method="GET",route="unmatched",status="400"} 1');
  });
});

describe("a request from an allowed origin that arrives while the runtime is closing", () => {
  it("is a 503 shutting_down the page can read: with CORS's headers", async () => {
    const { app, port } = await runtime({ corsOrigins: ["https://app.example"] });
    let closing: Promise<void> | undefined;
    // A request begun (the connection is not idle: close() waits for it), finished once the close began.
    const answer = exchange(port, (socket) =>
      socket.write("GET /api/queue/config HTTP/1.1\r\n", async () => {
        closing = app.close();
        for (let i = 0; i < 100 && app.server.listening; i++) await new Promise((resolve) => setTimeout(resolve, 20));
        socket.write("Host: x\r\nOrigin: https://app.example\r\n\r\n");
      }),
    );
    const { status, headers } = await answer;
    await closing;
    expect(status).toBe(503);
    expect(headers["access-control-allow-origin"]).toBe("https://app.example");
    expect(headers["x-content-type-options"]).toBe("nosniff");
    expect(headers.vary).toBe("Origin");
  });
});

describe("closing while a request is in flight", () => {
  it("the first docs request is answered, and the close does not wait out the connection's keep-alive", async () => {
    const { app, port } = await runtime();
    // The docs app is built on its first request (a second or so): close while it is.
    const answer = exchange(port, "GET /api/queue/docs/ HTTP/1.1\r\nHost: x\r\n\r\n");
    await new Promise((resolve) => setTimeout(resolve, 20));
    await app.close();
    const { status } = await answer; // the server ended the connection once its answer left
    expect(status).toBe(200);
  });
});
