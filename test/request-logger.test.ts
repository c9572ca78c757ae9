import { Writable } from "node:stream";
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { HttpMetrics } from "../src/metrics.ts";
import { makeChildrenLazy, RequestLogController } from "../src/request-logger.ts";

type Line = Record<string, unknown>;
function quietApp(controller: RequestLogController) {
  const lines: Line[] = [];
  let children = 0;
  const stream = new Writable({ write: (chunk, _encoding, done) => done(void lines.push(JSON.parse(String(chunk)))) });
  // pino's onChild: each child logger made for real.
  const app = Fastify({ logger: { level: "info", stream, onChild: () => children++ } as never, logController: controller });
  makeChildrenLazy(app.log);
  return { app, lines, children: () => children };
}

// Issue 32, item 3: a request's logger is made on its first line, so a read that logs nothing costs no
// pino child; a request that logs still writes its lines with its reqId, as Fastify's own child would.
describe("the lazy request logger", () => {
  it("makes no child for a request that logs nothing, and the same reqId-bound child for one that logs", async () => {
    const { app, lines, children } = quietApp(new RequestLogController(() => {}));
    app.get("/quiet", (_request, reply) => void reply.send("ok"));
    app.get("/loud", (request, reply) => {
      request.log.info({ detail: 1 }, "first");
      request.log.warn("second");
      request.log.child({ step: "inner" }).info("third");
      reply.send(request.log.level);
    });
    try {
      expect((await app.inject("/quiet")).body).toBe("ok");
      expect(children()).toBe(0);
      expect((await app.inject("/loud")).body).toBe("info");
      expect(children()).toBe(2); // one child for the request's lines, one for the inner child's
      expect(lines.map(({ msg, reqId, detail, step }) => ({ msg, reqId, detail, step }))).toEqual([
        { msg: "first", reqId: "req-2", detail: 1, step: undefined },
        { msg: "second", reqId: "req-2", detail: undefined, step: undefined },
        { msg: "third", reqId: "req-2", detail: undefined, step: "inner" },
      ]);
    } finally {
      await app.close();
    }
  });
});

// Issue 32, item 3: answers are counted from Fastify's log controller (no onResponse hook), reads are
// not logged unless asked for, and every other request is, as Fastify logs it.
describe("the request log controller", () => {
  it("counts every answer by route, method and status with its time, and logs only what is not a read", async () => {
    const http = new HttpMetrics();
    const { app, lines } = quietApp(new RequestLogController((request, reply) => http.record(request.method, request.routeOptions.url ?? "unmatched", reply.statusCode, reply.elapsedTime / 1000)));
    app.get("/read", (_request, reply) => void reply.send("ok"));
    app.post("/write", (_request, reply) => void reply.code(202).send("ok"));
    try {
      await app.inject("/read");
      await app.inject("/read");
      await app.inject({ method: "POST", url: "/write" });
      await app.inject("/nowhere");
      const counts = [...http.counts()].map(({ labels, statuses, count, sum }) => ({ ...labels, statuses: Object.fromEntries(statuses), count, timed: sum > 0 }));
      expect(counts).toEqual([
        { method: "GET", route: "/read", statuses: { 200: 2 }, count: 2, timed: true },
        { method: "POST", route: "/write", statuses: { 202: 1 }, count: 1, timed: true },
        { method: "GET", route: "unmatched", statuses: { 404: 1 }, count: 1, timed: true },
      ]);
      expect(lines.map(({ msg, reqId }) => ({ msg, reqId }))).toEqual([
        { msg: "incoming request", reqId: "req-3" },
        { msg: "request completed", reqId: "req-3" },
      ]);
    } finally {
      await app.close();
    }
  });

  it("logs reads once asked to (--log-level debug)", async () => {
    const controller = new RequestLogController(() => {});
    controller.logReads = true;
    const { app, lines } = quietApp(controller);
    app.get("/read", (_request, reply) => void reply.send("ok"));
    try {
      await app.inject("/read");
      expect(lines.map(({ msg }) => msg)).toEqual(["incoming request", "request completed"]);
    } finally {
      await app.close();
    }
  });
});
