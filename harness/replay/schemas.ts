import { z } from "zod";
import { FailureReason, OperationKind, OperationState } from "../../src/schemas/operation.ts";

// The replay's question and answer: the dev route's schemas, the library's types and the OpenAPI
// document's, from these alone.

/** Without `send`, a replay ends at the admission: accepted, or rejected. */
export const DRY_STATES: ReadonlySet<OperationState> = new Set(["accepted", "rejected"]);

export const ReplayOptions = z
  .strictObject({
    at: z.int().min(0).optional().meta({ description: "replay on the state of this block (default: the head, read once, so every check and the trace see one state)" }),
    send: z.boolean().optional().meta({ description: "relay it for real, as a new operation linked to the original, and wait for it to end (default false: nothing is sent)" }),
    expect: OperationState.optional().meta({
      description: "the state that counts as success (exit 0): default `accepted` without `send` (the admission's verdict), `confirmed` with it. Without `send` only `accepted` or `rejected` can be met",
    }),
    waitMs: z.int().min(0).max(600_000).optional().meta({ description: "with `send`, how long to wait for the new operation to end (default 60000); still live then, it cannot be judged (exit 125)" }),
  })
  .meta({ description: "How to replay" });
export type ReplayOptions = z.input<typeof ReplayOptions>;

export const DiffFrame = z.strictObject({
  contract: z.string(),
  function: z.string(),
  args: z.array(z.string()).nullable().meta({ description: "the arguments decoded with the fixtures' ABIs, shortened; null when not known" }),
  returned: z.string().nullable(),
  error: z.string().nullable(),
  gasUsed: z.int(),
});

export const FrameChange = z
  .strictObject({
    change: z.enum(["added", "removed", "changed"]).meta({ description: "added: only the replay calls it; removed: only the original did; changed: both, differently" }),
    path: z.array(z.string()).meta({ description: "the frames from the root down to this one, as Contract.function" }),
    fields: z.array(z.enum(["input", "output", "error"])).meta({ description: "what differs in a changed frame: its arguments, its return, its revert" }),
    before: DiffFrame.nullable(),
    after: DiffFrame.nullable(),
  })
  .meta({ description: "A frame that differs between the original's trace and the replay's" });

export const TraceDiff = z
  .strictObject({
    identical: z.boolean().meta({ description: "the same calls with the same arguments, returns and reverts (gas aside)" }),
    first: FrameChange.nullable().meta({ description: "the first frame that differs in execution order; null when identical" }),
    changes: z.array(FrameChange).meta({ description: "every difference in execution order, the first included" }),
    text: z.string().meta({ description: "the two trees merged, a line a frame: two spaces the same, '- ' the original's, '+ ' the replay's" }),
  })
  .meta({ description: "The original's call trace against the replay's" });

export const TraceView = z.strictObject({
  source: z.enum(["transaction", "call"]).meta({ description: "transaction: the mined one (debug_traceTransaction); call: the request's call at `block` (debug_traceCall)" }),
  transactionHash: z.string().nullable(),
  block: z.int().nullable().meta({ description: "the block of the transaction, or whose state the call ran on" }),
  error: z.string().nullable().meta({ description: "the outermost decoded error, if it reverted" }),
  text: z.string(),
  root: z.unknown().meta({ description: "the call tree: { type, from, to, contract, function, gasUsed, error, input, output, args, returned, calls: [ …the same… ] }" }),
});

const Side = {
  state: OperationState,
  error: z.string().nullable().meta({ description: "the decoded custom error (\"NullifierSpent(12)\"), if it reverts" }),
  trace: TraceView.nullable(),
  traceUnavailable: z.string().nullable().meta({ description: "why there is no trace (the node keeps no state of its block, say)" }),
};

export const SentReplay = z.strictObject({
  id: z.string().nullable().meta({ description: "the new operation, or null when the relayer refused it at admission" }),
  replayOf: z.string().meta({ description: "the operation replayed: the link between the two, kept by the dev stack (the operation's own shape has no room for it)" }),
  state: OperationState.meta({ description: "its state when the replay answered: terminal, unless it was still live after waitMs" }),
  reason: FailureReason.nullable(),
  transactionHash: z.string().nullable(),
});

export const ReplayAnswer = z
  .strictObject({
    operation: z.string(),
    kind: OperationKind,
    block: z.strictObject({ number: z.int(), head: z.boolean().meta({ description: "whether it was the head when the replay ran" }) }),
    before: z.strictObject({ ...Side, reason: FailureReason.nullable().meta({ description: "the stored operation's failure" }) }).meta({ description: "the stored operation, and its trace: its mined transaction's, or its call at the block it was judged at" }),
    after: z
      .strictObject({
        ...Side,
        admitted: z.boolean().meta({ description: "whether the relayer's admission checks would take it" }),
        refusal: FailureReason.nullable().meta({ description: "the admission's refusal, as a client would hear it" }),
        simulation: z.strictObject({ ok: z.boolean(), reason: FailureReason.nullable() }).meta({ description: "the Pool's simulation alone" }),
        sent: SentReplay.nullable(),
      })
      .meta({ description: "the same request now: the relayer's checks and simulation, its call's trace (the sent transaction's, with send)" }),
    diff: TraceDiff.nullable().meta({ description: "null when the original's trace is unavailable" }),
    verdict: z.strictObject({
      expected: OperationState,
      matched: z.boolean().nullable().meta({ description: "null: it cannot be judged (a sent operation still live)" }),
      exitCode: z.union([z.literal(0), z.literal(1), z.literal(125)]).meta({ description: "as git bisect run reads it: 0 good, 1 bad, 125 cannot be judged" }),
    }),
    text: z.string().meta({ description: "all of it as lines for a terminal (queue-devstack replay prints it)" }),
  })
  .meta({ id: "ReplayAnswer", description: "An operation replayed on the chain as it is now" });
export type ReplayAnswer = z.output<typeof ReplayAnswer>;
export type TraceDiff = z.output<typeof TraceDiff>;
export type FrameChange = z.output<typeof FrameChange>;
export type DiffFrame = z.output<typeof DiffFrame>;

export const ReplayLinks = z
  .strictObject({
    operation: z.string(),
    replayOf: z.string().nullable().meta({ description: "the operation this one replays, when a replay sent it" }),
    replays: z.array(z.string()).meta({ description: "the operations sent as replays of this one, oldest first" }),
  })
  .meta({ description: "An operation's replay links, kept by the dev stack while it runs" });
export type ReplayLinks = z.output<typeof ReplayLinks>;
