import { Writable } from "node:stream";
import Fastify, { LogController } from "fastify";
import { describe, expect, it } from "vitest";
import { lazyRequestLogger } from "../src/request-logger.ts";

// Issue 32, item 3: a request's logger is made on its first line, so a read that logs nothing costs no
// pino child; a request that logs still writes its lines with its reqId, as Fastify's own child would.
describe("the lazy request logger", () => {
  it("makes no child for a request that logs nothing, and the same reqId-bound child for one that logs", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({ write: (chunk, _encoding, done) => done(void lines.push(JSON.parse(String(chunk)))) });
    const app = Fastify({ logger: { level: "info", stream }, logController: new LogController({ disableRequestLogging: true }), childLoggerFactory: lazyRequestLogger });
    let children = 0;
    const child = app.log.child.bind(app.log);
    app.log.child = ((...args: Parameters<typeof child>) => (children++, child(...args))) as typeof app.log.child;
    app.get("/quiet", (_request, reply) => void reply.send("ok"));
    app.get("/loud", (request, reply) => {
      request.log.info({ detail: 1 }, "first");
      request.log.warn("second");
      reply.send(request.log.level);
    });
    try {
      expect((await app.inject("/quiet")).body).toBe("ok");
      expect(children).toBe(0);
      expect((await app.inject("/loud")).body).toBe("info");
      expect(children).toBe(1); // one child for both lines
      expect(lines.map(({ msg, reqId, detail }) => ({ msg, reqId, detail }))).toEqual([
        { msg: "first", reqId: "req-2", detail: 1 },
        { msg: "second", reqId: "req-2", detail: undefined },
      ]);
    } finally {
      await app.close();
    }
  });
});
