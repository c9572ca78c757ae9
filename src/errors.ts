import type { ServerResponse } from "node:http";
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";
import type { Cors } from "./cors.ts";
import { StoreWriteError } from "./store/errors.ts";
import { PROBLEM_CONTENT_TYPE, PROBLEM_STATUS, ProblemError, problemBody, sendProblem, type ProblemCode } from "./problem.ts";

/**
 * Every failure leaves as application/problem+json with a stable `code`. Anything unforeseen is a 500
 * whose detail says nothing about internals (it is logged instead). `everyAnswer`: the headers every
 * answer carries (the security headers, and CORS's `Vary`), set by the one onRequest hook.
 */
export function installProblemHandlers(app: FastifyInstance, knownPaths: ReadonlyMap<string, readonly string[]>, everyAnswer: Readonly<Record<string, string>> = {}, cors: Cors | null = null): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ProblemError) return sendProblem(reply, error);
    if (error instanceof StoreWriteError) {
      // Nothing was accepted: the client may send the same request again once the operator made room.
      request.log.error({ err: error }, "operation store write failed");
      return sendProblem(reply, new ProblemError("store_unavailable", `${error.message}; nothing was accepted, try again later`, { headers: { "retry-after": "30" } }));
    }
    if (error.validation !== undefined && error.validation.length > 0) {
      const issues = error.validation.map((v) => ({ path: v.instancePath || "/", message: v.message ?? "invalid" }));
      const where = error.validationContext ?? "request";
      const detail = issues.map((i) => `${where}${i.path === "/" ? "" : i.path}: ${i.message}`).join("; ");
      return sendProblem(reply, new ProblemError("invalid_request", detail, { extensions: { issues } }));
    }
    switch (error.code) {
      case "FST_ERR_CTP_BODY_TOO_LARGE":
        return sendProblem(reply, new ProblemError("payload_too_large", error.message));
      case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
        return sendProblem(reply, new ProblemError("unsupported_media_type", "send the request body as application/json"));
    }
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      return sendProblem(reply, new ProblemError("invalid_request", error.message));
    }
    request.log.error({ err: error }, "unhandled error");
    return sendProblem(reply, new ProblemError("internal_error", "the runtime failed to handle this request"));
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    const allowed = knownPaths.get(path);
    if (allowed !== undefined) {
      return sendProblem(
        reply,
        new ProblemError("method_not_allowed", `${request.method} is not allowed on ${path}; use ${allowed.join(", ")}`, {
          headers: { allow: allowed.join(", ") },
        }),
      );
    }
    return sendProblem(reply, new ProblemError("route_not_found", `no route ${request.method} ${path}`));
  });

  // Fastify's own closing answer is a hand-written JSON 503 (return503OnClosing, turned off in app.ts).
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
    // Node's server.close() ends the connections idle at that moment only: one whose request was in flight
    // (a first docs page, a relay) is kept alive after its answer, and the close waited for its keep-alive
    // timeout (72 s). Such a connection is ended once its answer has left.
    const server = app.server;
    if (!server.listening) return;
    const reaper = setInterval(() => server.closeIdleConnections(), 25).unref();
    server.once("close", () => clearInterval(reaper));
  });
  // The one onRequest hook of every route: a callback, not an async one (a promise per request is
  // measurable), setting the headers every answer carries (protection.ts's, and CORS's Vary) and
  // handing a request with an Origin to @fastify/cors (cors.ts).
  app.addHook("onRequest", (request, reply, done) => {
    reply.headers(everyAnswer);
    responses.set(request.raw.socket, reply.raw);
    if (!closing) return withCors(cors, request, reply, done);
    // With CORS's headers too, or a browser's page could not read it (nor its Retry-After).
    withCors(cors, request, reply, () =>
      sendProblem(reply.header("connection", "close"), new ProblemError("shutting_down", "the runtime is shutting down; try again", { headers: { "retry-after": "5" } })),
    );
  });
}

/**
 * Goes on by `next` after @fastify/cors's hook for a request with an Origin (it sets CORS's headers, or
 * answers a preflight), at once for any other.
 */
export function withCors(cors: Cors | null, request: FastifyRequest, reply: FastifyReply, next: HookHandlerDoneFunction): void {
  if (cors !== null && request.raw.headers.origin !== undefined) return cors.onRequest(request, reply, next);
  next();
}

/** Fastify's errors that never reach a route (a malformed URL, an over-long path parameter). */
export function answerFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const code: ProblemCode = error.code === "FST_ERR_BAD_URL" || error.code === "FST_ERR_MAX_PARAM_LENGTH" ? "invalid_request" : "internal_error";
  if (code === "internal_error") reply.log.error({ err: error }, "framework error");
  sendProblem(reply, new ProblemError(code, code === "invalid_request" ? error.message : "the runtime failed to handle this request"));
}

/** The response each connection is writing, if any: a parser error must not be written into its middle. */
const responses = new WeakMap<Socket, ServerResponse>();

/**
 * Errors of Node's HTTP parser, before there is a request or a reply (Fastify's clientErrorHandler): a
 * request line of garbage, headers over the limit, a request not received within the timeouts. Written
 * straight to the socket, as problems, and the connection is closed.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket, timeouts: { requestTimeoutMs: number }): void {
  // A reset connection has nobody to answer.
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const [code, detail]: [ProblemCode, string] =
    error.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? ["request_timeout", `the request was not received in full within ${timeouts.requestTimeoutMs} ms`]
      : error.code === "HPE_HEADER_OVERFLOW"
        ? ["headers_too_large", "the request line and headers exceed the size limit"]
        : error.code === "HPE_CHUNK_EXTENSIONS_OVERFLOW"
          ? ["payload_too_large", "chunk extensions exceed the size limit"]
          : ["invalid_request", "the request is not valid HTTP/1.1"];
  const inProgress = responses.get(socket);
  if (socket.writable && !(inProgress?.headersSent && !inProgress.writableFinished)) {
    const body = JSON.stringify(problemBody(code, detail));
    const status = PROBLEM_STATUS[code];
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
