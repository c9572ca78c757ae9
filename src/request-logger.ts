import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from "fastify";

type Bindings = Parameters<FastifyBaseLogger["child"]>[0];
type ChildOptions = Parameters<FastifyBaseLogger["child"]>[1];

/**
 * A request's logger, made on its first line: a polled read logs nothing (see disableRequestLogging),
 * and making a pino child (its bindings serialized) for each cost a twentieth of one. The first line
 * makes the same child Fastify would have, so every line still carries its reqId.
 */
class LazyRequestLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildOptions;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  private get real(): FastifyBaseLogger {
    return (this.#child ??= this.#parent.child(this.#bindings, this.#options));
  }

  get level(): string {
    return this.real.level;
  }
  set level(level: string) {
    this.real.level = level;
  }
  isLevelEnabled(level: string): boolean {
    return (this.real as FastifyBaseLogger & { isLevelEnabled(level: string): boolean }).isLevelEnabled(level);
  }
  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }
  fatal(...args: Parameters<FastifyBaseLogger["fatal"]>): void {
    this.real.fatal(...args);
  }
  error(...args: Parameters<FastifyBaseLogger["error"]>): void {
    this.real.error(...args);
  }
  warn(...args: Parameters<FastifyBaseLogger["warn"]>): void {
    this.real.warn(...args);
  }
  info(...args: Parameters<FastifyBaseLogger["info"]>): void {
    this.real.info(...args);
  }
  debug(...args: Parameters<FastifyBaseLogger["debug"]>): void {
    this.real.debug(...args);
  }
  trace(...args: Parameters<FastifyBaseLogger["trace"]>): void {
    this.real.trace(...args);
  }
  silent(...args: Parameters<FastifyBaseLogger["silent"]>): void {
    this.real.silent(...args);
  }
}

/** Fastify's childLoggerFactory: each request's logger, made when it first logs. */
export const lazyRequestLogger = (logger: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger => new LazyRequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger;

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Fastify's per-request log lines, and each answer's count (`answered`, /metrics). Reads are polled (a
 * status every second per client): logging each would drown the log and cost more than answering it, so
 * they are logged only once `logReads` is set (from --log-level debug on). Fastify calls requestCompleted
 * from the response listeners it sets up for its logger on every request, so an answer is counted there
 * rather than in an onResponse hook: that hook's runner (three closures a request) is spared.
 */
export class RequestLogController extends LogController {
  logReads = false;
  readonly #answered: (request: FastifyRequest, reply: FastifyReply) => void;

  constructor(answered: (request: FastifyRequest, reply: FastifyReply) => void) {
    super();
    this.#answered = answered;
  }

  override isLogDisabled(request: FastifyRequest): boolean {
    return !this.logReads && READS.has(request.method);
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    this.#answered(request, reply);
    super.requestCompleted(error, request, reply, metadata);
  }
}
