import type { FastifyError, FastifyInstance } from "fastify";
import { ProblemError, sendProblem } from "./problem.ts";

/**
 * Every failure leaves as application/problem+json with a stable `code`. Anything unforeseen is a 500
 * whose detail says nothing about internals (it is logged instead).
 */
export function installProblemHandlers(app: FastifyInstance, knownPaths: ReadonlyMap<string, readonly string[]>): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ProblemError) return sendProblem(reply, error);
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
}
