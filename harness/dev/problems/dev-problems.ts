import { PROBLEM_CODES_DOCS, PROBLEMS, ProblemError, statusesOf, type ProblemCode, type ProblemOptions, type ProblemTable } from "../../../src/problem.ts";

/**
 * The problem codes only a dev stack's dev routes answer, one row each: never in the operator's runtime
 * nor its OpenAPI document. The dev stack's document lists them beside the runtime's own.
 */
export const DEV_PROBLEMS = {
  host_not_allowed: { status: 403, title: "Host name not allowed", docs: "docs/dev-controls.md#dns-rebinding" },
  cross_origin_refused: { status: 403, title: "Cross-origin request refused", docs: "docs/dev-controls.md#cross-site-requests" },
  reset_failed: { status: 503, title: "Reset failed", docs: PROBLEM_CODES_DOCS },
  unknown_contract: { status: 404, title: "No such contract in this stack", docs: "docs/patching.md#contract" },
  patch_source_invalid: { status: 422, title: "Not a contract's code to patch with", docs: "docs/patching.md#source" },
  compile_failed: { status: 422, title: "The patch's source does not compile", docs: "docs/patching.md#source" },
  storage_layout_changed: { status: 422, title: "The patch moves or retypes a storage variable", docs: "docs/patching.md#what-is-checked" },
  immutable_changed: { status: 422, title: "The patch changes or drops an immutable", docs: "docs/patching.md#what-is-checked" },
  patch_base_unknown: { status: 422, title: "The deployed contract's layout is unknown", docs: "docs/patching.md#what-is-checked" },
  operation_live: { status: 409, title: "Operation still in flight", docs: "docs/replay.md#errors" },
  not_replayable: { status: 422, title: "Operation cannot be replayed", docs: "docs/replay.md#errors" },
} as const satisfies ProblemTable;

export type DevProblemCode = keyof typeof DEV_PROBLEMS;

/** Every code a dev stack answers: the runtime's and its dev routes'. */
export const STACK_PROBLEMS: ProblemTable<ProblemCode | DevProblemCode> = { ...PROBLEMS, ...DEV_PROBLEMS };

/** Each of a dev stack's codes and its status. */
export const STACK_PROBLEM_STATUS = statusesOf(STACK_PROBLEMS);

/** A dev route's problem: one of its own codes, rendered as the runtime renders its own. */
export const devProblem = (code: DevProblemCode, detail: string, options: ProblemOptions = {}): ProblemError<DevProblemCode> =>
  new ProblemError(code, detail, { ...options, table: DEV_PROBLEMS });
