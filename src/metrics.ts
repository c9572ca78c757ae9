import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { z } from "zod";
import { METRICS_PATH } from "./paths.ts";
import { Problem } from "./problem.ts";
import type { EngineEvents } from "./relay/engine.ts";
import type { OperationStore } from "./store/types.ts";

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
  http: HttpMetrics;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** One route's answers: by status, and their times in LATENCY_BUCKETS (the last slot: above them all). */
interface RouteCounts {
  readonly labels: { method: string; route: string };
  readonly statuses: Map<number, number>;
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * Requests by route and status, and their latency, counted in plain numbers: a read answered thousands
 * of times a second pays an increment, not prom-client's label checks and hashing (a tenth of a small
 * read's time). prom-client reads them at a scrape. Looked up by route, then method: both are strings
 * Fastify and Node keep (their hashes are kept with them), where a key joined per answer is hashed anew.
 */
export class HttpMetrics {
  private readonly routes = new Map<string, Map<string, RouteCounts>>();

  /** One answer of `method route` with `status`, after `seconds`. */
  record(method: string, route: string, status: number, seconds: number): void {
    let methods = this.routes.get(route);
    if (methods === undefined) this.routes.set(route, (methods = new Map()));
    let counts = methods.get(method);
    if (counts === undefined) {
      counts = { labels: { method, route }, statuses: new Map(), buckets: new Float64Array(LATENCY_BUCKETS.length + 1), sum: 0, count: 0 };
      methods.set(method, counts);
    }
    counts.statuses.set(status, (counts.statuses.get(status) ?? 0) + 1);
    let bucket = 0;
    while (bucket < LATENCY_BUCKETS.length && seconds > (LATENCY_BUCKETS[bucket] as number)) bucket++;
    counts.buckets[bucket] = (counts.buckets[bucket] as number) + 1;
    counts.sum += seconds;
    counts.count++;
  }

  /** The counts, for prom-client at a scrape. */
  *counts(): Iterable<RouteCounts> {
    for (const methods of this.routes.values()) yield* methods.values();
  }
}

/** queue_http_request_duration_seconds, in prom-client's exposition (a histogram of HttpMetrics' counts). */
function latencyMetric(http: HttpMetrics) {
  const name = "queue_http_request_duration_seconds";
  return {
    name,
    help: "Time to answer an HTTP request, by route",
    type: "histogram",
    aggregator: "sum",
    get() {
      const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
      for (const { labels, buckets, sum, count } of http.counts()) {
        let cumulative = 0;
        LATENCY_BUCKETS.forEach((le, i) => {
          cumulative += buckets[i] as number;
          values.push({ labels: { ...labels, le }, value: cumulative, metricName: `${name}_bucket` });
        });
        values.push({ labels: { ...labels, le: "+Inf" }, value: count, metricName: `${name}_bucket` });
        values.push({ labels, value: sum, metricName: `${name}_sum` });
        values.push({ labels, value: count, metricName: `${name}_count` });
      }
      return { name, help: this.help, type: this.type, values, aggregator: this.aggregator };
    },
  };
}

export function createMetrics(storeOf: () => OperationStore | null): RuntimeMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "queue_" });
  const http = new HttpMetrics();
  new Counter({
    name: "queue_http_requests_total",
    help: "HTTP requests answered, by route and status",
    labelNames: ["method", "route", "status"],
    registers: [registry],
    collect() {
      this.reset();
      for (const { labels, statuses } of http.counts()) for (const [status, n] of statuses) this.inc({ ...labels, status: String(status) }, n);
    },
  });
  registry.registerMetric(latencyMetric(http) as never);
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
    http,
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

/** Counts an answer by its route pattern (never the raw URL: ids would explode the label set); app.ts's log controller calls it for every answer. */
export function countAnswer(http: HttpMetrics, request: FastifyRequest, reply: FastifyReply): void {
  http.record(request.method, request.routeOptions.url ?? "unmatched", reply.statusCode, reply.elapsedTime / 1000);
}

/** Serves GET /metrics. */
export function registerMetrics(app: FastifyInstance, metrics: RuntimeMetrics): void {
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
