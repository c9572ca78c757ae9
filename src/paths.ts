/** Every route of the queue runtime, under {base_url}. Routes and the manifest both read these. */
export const API_PREFIX = "/api/queue";

export const QUEUE_PATHS = {
  config: `${API_PREFIX}/config`,
  networks: `${API_PREFIX}/networks`,
  assets: `${API_PREFIX}/assets`,
  quote: `${API_PREFIX}/quote`,
  sendRelay: `${API_PREFIX}/send-relay`,
  sendStatus: `${API_PREFIX}/send-status`,
  withdrawRelay: `${API_PREFIX}/withdraw-relay`,
  withdrawStatus: `${API_PREFIX}/withdraw-status`,
  finalize: `${API_PREFIX}/finalize`,
  artifacts: `${API_PREFIX}/artifacts`,
} as const;

/** Readiness, for load balancers and supervisors (our design: the spec shows none). */
export const HEALTH_PATH = `${API_PREFIX}/health`;
/** Prometheus metrics, text exposition format (outside the API prefix, where scrapers look). */
export const METRICS_PATH = "/metrics";

/** The methods that only read: nothing a request of them asks changes anything. */
export const READ_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);
