import type { FastifyReply } from "fastify";
import { z } from "zod";
import { QueueDevstackError } from "./errors/index.ts";

/** Stable problem codes (the `code` member) and their HTTP status. Clients switch on `code`. */
export const PROBLEM_STATUS = {
  invalid_request: 400,
  host_not_allowed: 403,
  cross_origin_refused: 403,
  route_not_found: 404,
  block_not_found: 404,
  artifact_not_found: 404,
  operation_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  rate_limited: 429,
  too_many_quotes: 429,
  too_many_in_flight: 429,
  unknown_root: 409,
  nullifier_spent: 409,
  nullifier_in_flight: 409,
  duplicate_nullifier: 409,
  quote_used: 409,
  block_before_deployment: 422,
  wrong_route: 422,
  deployment_mismatch: 422,
  unsupported_asset: 422,
  binding_mismatch: 422,
  relayer_mismatch: 422,
  fee_too_low: 422,
  invalid_proof: 422,
  simulation_failed: 422,
  idempotency_key_reused: 422,
  route_not_approved: 422,
  amount_too_small: 422,
  quote_refused: 422,
  quote_expired: 422,
  quote_mismatch: 422,
  price_unavailable: 503,
  reservation_not_found: 404,
  reservation_not_settled: 409,
  already_finalized: 409,
  operation_live: 409,
  not_replayable: 422,
  internal_error: 500,
  not_implemented: 501,
  chain_unavailable: 503,
  relayer_unfunded: 503,
  gas_price_too_high: 503,
  queue_full: 503,
  store_unavailable: 503,
  not_ready: 503,
  shutting_down: 503,
  chain_reverting: 503,
  reset_failed: 503,
  unknown_contract: 404,
  patch_source_invalid: 422,
  compile_failed: 422,
  storage_layout_changed: 422,
  immutable_changed: 422,
  patch_base_unknown: 422,
} as const;

export type ProblemCode = keyof typeof PROBLEM_STATUS;

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

const TITLES: Record<ProblemCode, string> = {
  invalid_request: "Invalid request",
  host_not_allowed: "Host name not allowed",
  cross_origin_refused: "Cross-origin request refused",
  route_not_found: "No such route",
  block_not_found: "Block not found",
  artifact_not_found: "Proof artifact not found",
  operation_not_found: "Operation not found",
  method_not_allowed: "Method not allowed",
  request_timeout: "Request not received in time",
  payload_too_large: "Payload too large",
  unsupported_media_type: "Unsupported media type",
  headers_too_large: "Request headers too large",
  rate_limited: "Too many requests",
  too_many_quotes: "Too many live quotes for this client",
  too_many_in_flight: "Too many operations in flight for this client",
  unknown_root: "Unknown Merkle root",
  nullifier_spent: "Nullifier already spent",
  nullifier_in_flight: "Nullifier held by a live operation",
  duplicate_nullifier: "Duplicate nullifier in the request",
  quote_used: "Quote already used",
  block_before_deployment: "Block precedes the Pool's deployment",
  wrong_route: "Wrong route for this operation",
  deployment_mismatch: "Made for another deployment",
  unsupported_asset: "Unsupported asset",
  binding_mismatch: "Public fields not bound to the proof",
  relayer_mismatch: "Fee not paid to this relayer",
  fee_too_low: "Relay fee too low",
  invalid_proof: "Invalid proof",
  simulation_failed: "Transaction would revert",
  idempotency_key_reused: "Idempotency key reused with another request",
  route_not_approved: "Action route not approved",
  amount_too_small: "Amount too small for the fees",
  quote_refused: "The route cannot price this request",
  quote_expired: "Quote expired",
  quote_mismatch: "Terms differ from the quote",
  price_unavailable: "No price for this pair yet",
  reservation_not_found: "Reservation not found",
  reservation_not_settled: "Reservation not settled yet",
  already_finalized: "Reservation already finalized",
  operation_live: "Operation still in flight",
  not_replayable: "Operation cannot be replayed",
  internal_error: "Internal error",
  not_implemented: "Not implemented yet",
  chain_unavailable: "Chain unavailable",
  relayer_unfunded: "Relayer out of funds",
  gas_price_too_high: "Gas price above the relayer's cap",
  queue_full: "Queue full",
  store_unavailable: "Operation store unavailable",
  not_ready: "Not ready",
  shutting_down: "Shutting down",
  chain_reverting: "Chain and operation store being reverted",
  reset_failed: "Reset failed",
  unknown_contract: "No such contract in this stack",
  patch_source_invalid: "Not a contract's code to patch with",
  compile_failed: "The patch's source does not compile",
  storage_layout_changed: "The patch moves or retypes a storage variable",
  immutable_changed: "The patch changes or drops an immutable",
  patch_base_unknown: "The deployed contract's layout is unknown",
};

/** An error a handler throws to answer with a problem; the error handler renders it. */
export class ProblemError extends QueueDevstackError {
  override name = "ProblemError";
  readonly code: ProblemCode;
  readonly status: number;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    code: ProblemCode,
    detail: string,
    options: { extensions?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.code = code;
    this.status = PROBLEM_STATUS[code];
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
  }
}

export function problemBody(code: ProblemCode, detail: string, instance?: string, extensions: Record<string, unknown> = {}): Problem {
  return {
    type: `urn:queue-devstack:problem:${code}`,
    title: TITLES[code],
    status: PROBLEM_STATUS[code],
    detail,
    code,
    ...(instance === undefined ? {} : { instance }),
    ...extensions,
  };
}

export function sendProblem(reply: FastifyReply, error: ProblemError): FastifyReply {
  return reply
    .code(error.status)
    .headers(error.headers)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(problemBody(error.code, error.message, reply.request.url.split("?")[0], error.extensions)));
}
