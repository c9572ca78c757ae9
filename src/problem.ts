import type { FastifyReply } from "fastify";
import { z } from "zod";
import { QueueDevstackError } from "./errors/index.ts";

/** One stable problem code's row: its HTTP status, its title, and the page that explains it. */
export interface ProblemRow {
  readonly status: number;
  readonly title: string;
  /** From the package's root (it ships the docs). */
  readonly docs: string;
}

/** A table of problem codes: the runtime's own (PROBLEMS), or one a dev stack adds for its dev routes. */
export type ProblemTable<C extends string = string> = { readonly [code in C]: ProblemRow };

/** Where the codes are listed, each with when it is answered. */
export const PROBLEM_CODES_DOCS = "docs/error-codes.md#the-codes";
const CODES = PROBLEM_CODES_DOCS;

/**
 * The queue runtime's problem codes (the `code` member), one row each. Clients switch on `code`. A dev
 * stack's dev routes add their own (harness/dev/problems/), never listed here nor in an operator's
 * OpenAPI document.
 */
export const PROBLEMS = {
  invalid_request: { status: 400, title: "Invalid request", docs: CODES },
  route_not_found: { status: 404, title: "No such route", docs: CODES },
  block_not_found: { status: 404, title: "Block not found", docs: CODES },
  artifact_not_found: { status: 404, title: "Proof artifact not found", docs: CODES },
  operation_not_found: { status: 404, title: "Operation not found", docs: CODES },
  method_not_allowed: { status: 405, title: "Method not allowed", docs: CODES },
  request_timeout: { status: 408, title: "Request not received in time", docs: CODES },
  payload_too_large: { status: 413, title: "Payload too large", docs: CODES },
  unsupported_media_type: { status: 415, title: "Unsupported media type", docs: CODES },
  headers_too_large: { status: 431, title: "Request headers too large", docs: CODES },
  rate_limited: { status: 429, title: "Too many requests", docs: CODES },
  too_many_quotes: { status: 429, title: "Too many live quotes for this client", docs: CODES },
  too_many_in_flight: { status: 429, title: "Too many operations in flight for this client", docs: CODES },
  unknown_root: { status: 409, title: "Unknown Merkle root", docs: CODES },
  nullifier_spent: { status: 409, title: "Nullifier already spent", docs: CODES },
  nullifier_in_flight: { status: 409, title: "Nullifier held by a live operation", docs: CODES },
  duplicate_nullifier: { status: 409, title: "Duplicate nullifier in the request", docs: CODES },
  quote_used: { status: 409, title: "Quote already used", docs: CODES },
  block_before_deployment: { status: 422, title: "Block precedes the Pool's deployment", docs: CODES },
  wrong_route: { status: 422, title: "Wrong route for this operation", docs: CODES },
  deployment_mismatch: { status: 422, title: "Made for another deployment", docs: CODES },
  unsupported_asset: { status: 422, title: "Unsupported asset", docs: CODES },
  binding_mismatch: { status: 422, title: "Public fields not bound to the proof", docs: CODES },
  relayer_mismatch: { status: 422, title: "Fee not paid to this relayer", docs: CODES },
  fee_too_low: { status: 422, title: "Relay fee too low", docs: CODES },
  invalid_proof: { status: 422, title: "Invalid proof", docs: CODES },
  simulation_failed: { status: 422, title: "Transaction would revert", docs: CODES },
  idempotency_key_reused: { status: 422, title: "Idempotency key reused with another request", docs: CODES },
  route_not_approved: { status: 422, title: "Action route not approved", docs: CODES },
  amount_too_small: { status: 422, title: "Amount too small for the fees", docs: CODES },
  quote_refused: { status: 422, title: "The route cannot price this request", docs: CODES },
  quote_expired: { status: 422, title: "Quote expired", docs: CODES },
  quote_mismatch: { status: 422, title: "Terms differ from the quote", docs: CODES },
  price_unavailable: { status: 503, title: "No price for this pair yet", docs: CODES },
  reservation_not_found: { status: 404, title: "Reservation not found", docs: CODES },
  reservation_not_settled: { status: 409, title: "Reservation not settled yet", docs: CODES },
  already_finalized: { status: 409, title: "Reservation already finalized", docs: CODES },
  internal_error: { status: 500, title: "Internal error", docs: CODES },
  not_implemented: { status: 501, title: "Not implemented yet", docs: CODES },
  chain_unavailable: { status: 503, title: "Chain unavailable", docs: CODES },
  relayer_unfunded: { status: 503, title: "Relayer out of funds", docs: CODES },
  gas_price_too_high: { status: 503, title: "Gas price above the relayer's cap", docs: CODES },
  queue_full: { status: 503, title: "Queue full", docs: CODES },
  store_unavailable: { status: 503, title: "Operation store unavailable", docs: CODES },
  not_ready: { status: 503, title: "Not ready", docs: CODES },
  shutting_down: { status: 503, title: "Shutting down", docs: CODES },
  chain_reverting: { status: 503, title: "Chain and operation store being reverted", docs: CODES },
} as const satisfies ProblemTable;

export type ProblemCode = keyof typeof PROBLEMS;

/** Each code's status, read from PROBLEMS. */
export const PROBLEM_STATUS = statusesOf(PROBLEMS);

/** A table's codes and their statuses. */
export function statusesOf<C extends string>(table: ProblemTable<C>): Record<C, number> {
  return Object.fromEntries(Object.entries<ProblemRow>(table).map(([code, row]) => [code, row.status])) as Record<C, number>;
}

/** RFC 9457 problem details, with our `code` extension member. */
export const Problem = z
  .looseObject({
    type: z.string(),
    title: z.string(),
    status: z.int(),
    detail: z.string(),
    code: z.string(),
    instance: z.string().optional(),
  })
  .meta({ id: "Problem", description: "RFC 9457 problem details; `code` is stable" });

export type Problem = z.output<typeof Problem>;

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

export interface ProblemOptions {
  extensions?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** A code of PROBLEMS needs no table; any other code, the table that has its row. */
type ProblemArgs<C extends string> = [C] extends [ProblemCode] ? [options?: ProblemOptions & { table?: ProblemTable<C> }] : [options: ProblemOptions & { table: ProblemTable<C> }];

/** An error a handler throws to answer with a problem; the error handler renders it. */
export class ProblemError<C extends string = ProblemCode> extends QueueDevstackError {
  override name = "ProblemError";
  readonly code: C;
  readonly status: number;
  readonly title: string;
  override readonly docsPath: string;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: C, detail: string, ...[options = {}]: ProblemArgs<C>) {
    super(detail);
    const row = ((options.table ?? PROBLEMS) as ProblemTable<C>)[code];
    this.code = code;
    this.status = row.status;
    this.title = row.title;
    this.docsPath = row.docs;
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
  }
}

export function problemBody(code: ProblemCode, detail: string, instance?: string, extensions: Record<string, unknown> = {}): Problem {
  return bodyOf(code, PROBLEMS[code], detail, instance, extensions);
}

function bodyOf(code: string, row: Pick<ProblemRow, "status" | "title">, detail: string, instance: string | undefined, extensions: Record<string, unknown>): Problem {
  return {
    type: `urn:queue-devstack:problem:${code}`,
    title: row.title,
    status: row.status,
    detail,
    code,
    ...(instance === undefined ? {} : { instance }),
    ...extensions,
  };
}

export function sendProblem(reply: FastifyReply, error: ProblemError<string>): FastifyReply {
  return reply
    .code(error.status)
    .headers(error.headers)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(bodyOf(error.code, error, error.message, reply.request.url.split("?")[0], error.extensions)));
}
