/** Where a code without a page of its own is explained: the library's table of codes. */
export const ERROR_CODES_DOCS = "docs/error-codes.md#errors-the-library-throws";

export interface QueueDevstackErrorOptions extends ErrorOptions {
  /** More than the message says (the cause's message, when not given). */
  details?: string;
}

/**
 * The base of every error queue-devstack and its runtime throw for a caller to catch, as viem's
 * BaseError: a stable `code` to match on (never `name`, which is for printing), the short message,
 * details and the docs page that explains it. Unlike viem's, the message is the short one alone: the
 * CLI prints it and callers read it, so it says what happened in one line and nothing more.
 */
export abstract class QueueDevstackError extends Error {
  override name = "QueueDevstackError";
  /** Stable: match on it. Each class names its own (a few, such as ProblemError's, one per instance). */
  abstract readonly code: string;
  /** The page that explains it, from the package's root (it ships the docs). */
  readonly docsPath: string = ERROR_CODES_DOCS;
  readonly details: string | undefined;

  constructor(message: string, options: QueueDevstackErrorOptions = {}) {
    const { details, ...errorOptions } = options;
    super(message, errorOptions);
    const cause = options.cause;
    this.details = details ?? (cause instanceof QueueDevstackError ? cause.details : cause instanceof Error ? cause.message : undefined);
  }

  /** The message itself: what happened, in one line. */
  get shortMessage(): string {
    return this.message;
  }
}
