import type { FastifyInstance } from "fastify";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { z } from "zod";
import { METRICS_PATH } from "./paths.ts";
import { Problem } from "./problem.ts";
import type { EngineEvents } from "./relay/engine.ts";
import type { OperationStore } from "./relay/store.ts";

/**
 * The runtime's Prometheus metrics, in a registry of its own (several runtimes may share a process):
 * requests by route and status, operations by state, time from accepted to confirmed, fee bumps and
 * reorgs seen, and Node's process metrics.
 */
export interface RuntimeMetrics {
  registry: Registry;
  /** Hooked into the relay engine. */
  engine: EngineEvents;
  /** Filled by the HTTP layer (registerMetrics). */
  requests: Counter<"method" | "route" | "status">;
  latency: Histogram<"method" | "route">;
}

export function createMetrics(storeOf: () => OperationStore | null): RuntimeMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "queue_" });
  const requests = new Counter({ name: "queue_http_requests_total", help: "HTTP requests answered, by route and status", labelNames: ["method", "route", "status"], registers: [registry] });
  const latency = new Histogram({
    name: "queue_http_request_duration_seconds",
    help: "Time to answer an HTTP request, by route",
    labelNames: ["method", "route"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  new Gauge({
    name: "queue_operations",
    help: "Operations in the store, by kind and state",
    labelNames: ["kind", "state"],
    registers: [registry],
    collect() {
      this.reset();
      for (const { kind, state, count } of storeOf()?.stateCounts() ?? []) this.set({ kind, state }, count);
    },
  });
  new Gauge({
    name: "queue_quotes_stored",
    help: "Quotes in the store, expired or not (deleted some time after expiry)",
    registers: [registry],
    collect() {
      this.set(storeOf()?.countQuotes() ?? 0);
    },
  });
  const confirmSeconds = new Histogram({
    name: "queue_operation_confirm_seconds",
    help: "Time from accepted to confirmed, by kind",
    labelNames: ["kind"],
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 15, 30, 60, 120, 300, 900],
    registers: [registry],
  });
  const transitions = new Counter({ name: "queue_operation_transitions_total", help: "Operation state changes, by kind and new state", labelNames: ["kind", "state"], registers: [registry] });
  const bumps = new Counter({ name: "queue_fee_bumps_total", help: "Stuck transactions replaced with a higher fee", registers: [registry] });
  const reorgs = new Counter({ name: "queue_reorgs_seen_total", help: "Operations whose block left the canonical chain", registers: [registry] });

  return {
    registry,
    requests,
    latency,
    engine: {
      transition(op, from) {
        transitions.inc({ kind: op.kind, state: op.state });
        if (from === "included" && op.state === "submitted") reorgs.inc();
        if (op.state === "confirmed") confirmSeconds.observe({ kind: op.kind }, (Date.now() - Date.parse(op.createdAt)) / 1000);
      },
      feeBump: () => bumps.inc(),
    },
  };
}

/** Counts every answer by its route pattern (never the raw URL: ids would explode the label set), and serves GET /metrics. */
export function registerMetrics(app: FastifyInstance, metrics: RuntimeMetrics): void {
  const { requests, latency } = metrics;
  // Each label set's child, made once: prom-client hashes the labels on every call otherwise.
  const counted = new Map<string, { inc(): void }>();
  const timed = new Map<string, { observe(seconds: number): void }>();
  app.addHook("onResponse", (request, reply, done) => {
    const method = request.method;
    const route = request.routeOptions.url ?? "unmatched";
    const status = reply.statusCode;
    const counter = `${method} ${route} ${status}`;
    let count = counted.get(counter);
    if (!count) counted.set(counter, (count = requests.labels({ method, route, status: String(status) })));
    count.inc();
    const timer = `${method} ${route}`;
    let time = timed.get(timer);
    if (!time) timed.set(timer, (time = latency.labels({ method, route })));
    time.observe(reply.elapsedTime / 1000);
    done();
  });
  app.get(METRICS_PATH, {
    schema: {
      summary: "Prometheus metrics",
      description:
        "Text exposition format: `queue_http_requests_total{method,route,status}`, `queue_http_request_duration_seconds`, `queue_operations{kind,state}`, `queue_operation_confirm_seconds{kind}` (accepted to confirmed), `queue_operation_transitions_total`, `queue_fee_bumps_total`, `queue_reorgs_seen_total`, and Node's process metrics (`queue_process_*`, `queue_nodejs_*`).",
      produces: ["text/plain"],
      response: { 200: z.string().meta({ description: "Prometheus text exposition format (text/plain; version=0.0.4)" }), default: Problem },
    },
    handler: async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  });
}
