import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from "fastify";
import { READ_METHODS } from "./paths.ts";

type Bindings = Parameters<FastifyBaseLogger["child"]>[0];
type ChildOptions = Parameters<FastifyBaseLogger["child"]>[1];
type MakeChild = FastifyBaseLogger["child"];

/**
 * A request's logger, made on its first line: a polled read logs nothing (see RequestLogController),
 * and making a pino child (its bindings serialized) for each cost a twentieth of one. The first line
 * makes the same child Fastify would have, so every line still carries its reqId.
 */
class LazyRequestLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #makeChild: MakeChild;
  readonly #bindings: Bindings;
  readonly #options: ChildOptions;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, makeChild: MakeChild, bindings: Bindings, options: ChildOptions) {
    this.#parent = parent;
    this.#makeChild = makeChild;
    this.#bindings = bindings;
    this.#options = options;
  }

  private get real(): FastifyBaseLogger {
    return (this.#child ??= this.#makeChild.call(this.#parent, this.#bindings, this.#options));
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

  /**
   * This class with every other member of `logger` (pino's bindings(), flush(), isLevelEnabled, levels,
   * custom levels' methods...) forwarded to the real child: a plugin or route calling any of them on
   * request.log gets what Fastify's own child would give. Once per root logger, on the prototype.
   */
  static forwarding(logger: object): typeof LazyRequestLogger {
    class Forwarding extends LazyRequestLogger {}
    const keys = new Set<string | symbol>();
    for (let o: object | null = logger; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o) as object | null) for (const key of Reflect.ownKeys(o)) keys.add(key);
    const real = (lazy: LazyRequestLogger) => lazy.real as unknown as Record<string | symbol, unknown>;
    for (const key of keys) {
      if (key === "constructor" || key in Forwarding.prototype) continue;
      const member: PropertyDescriptor =
        typeof (logger as Record<string | symbol, unknown>)[key] === "function"
          ? { value: function (this: LazyRequestLogger, ...args: unknown[]) { const target = real(this); return (target[key] as (...a: unknown[]) => unknown).apply(target, args); }, writable: true }
          : { get(this: LazyRequestLogger) { return real(this)[key]; }, set(this: LazyRequestLogger, value: unknown) { real(this)[key] = value; } };
      Object.defineProperty(Forwarding.prototype, key, { ...member, configurable: true });
    }
    return Forwarding;
  }
}

/**
 * Makes the children a logger's child() gives lazy: each request's logger is `log.child({ reqId })`,
 * from Fastify's default child logger factory. Given as a childLoggerFactory instead, each request's
 * logger would be checked by Fastify for its seven methods (3% of a read's CPU, bench:load). A child made
 * real inherits this child() (pino makes a child by Object.create of its parent): its own children are
 * lazy too, and bound to it.
 */
export function makeChildrenLazy(log: FastifyBaseLogger): void {
  const makeChild = log.child;
  const Lazy = LazyRequestLogger.forwarding(log);
  log.child = function (this: FastifyBaseLogger, bindings: Bindings, options?: ChildOptions) {
    return new Lazy(this, makeChild, bindings, options) as unknown as FastifyBaseLogger;
  } as MakeChild;
}


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
    return !this.logReads && READ_METHODS.has(request.method);
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    this.#answered(request, reply);
    super.requestCompleted(error, request, reply, metadata);
  }
}
