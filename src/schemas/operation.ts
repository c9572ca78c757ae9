import { z } from "zod";
import { Bytes32 } from "../config/primitives.ts";
import { OPERATION_STATES } from "./operation-states.ts";
import { DeploymentRef } from "./request.ts";

export const OperationState = z.enum(OPERATION_STATES);
export type OperationState = z.output<typeof OperationState>;
export const TERMINAL_STATES: ReadonlySet<OperationState> = new Set(["confirmed", "rejected", "reverted", "expired"]);

export const OperationKind = z.enum(["send", "withdraw", "finalize"]);
export type OperationKind = z.output<typeof OperationKind>;

export const FailureReason = z
  .strictObject({
    code: z.string().meta({ description: "stable failure code, e.g. nullifier_spent, unknown_root, reverted" }),
    detail: z.string(),
    revert: z.strictObject({ name: z.string(), args: z.array(z.string()) }).optional().meta({ description: "the Pool's decoded custom error" }),
  })
  .meta({ description: "Why an operation failed" });
export type FailureReason = z.output<typeof FailureReason>;

export const Attempt = z.strictObject({
  hash: Bytes32,
  nonce: z.int(),
  maxFeePerGas: z.string(),
  maxPriorityFeePerGas: z.string(),
  createdAt: z.string(),
});
export type Attempt = z.output<typeof Attempt>;

export const HistoryEntry = z.strictObject({
  state: OperationState,
  at: z.string(),
  detail: z.string().optional(),
  block: z.int().nonnegative().optional().meta({ description: "the head this step was judged on, when it says: a submission refused at admission (a dev stack keeps it)" }),
});
export type HistoryEntry = z.output<typeof HistoryEntry>;

export const Operation = z
  .strictObject({
    id: z.string().meta({ description: "status identifier: query /send-status?id= or /withdraw-status?id= (withdrawals, actions and finalizes)" }),
    kind: OperationKind,
    state: OperationState.meta({
      description:
        "rejected: nothing was broadcast; either a re-check before signing failed, or (a dev stack only) the submission itself was refused by a check of the chain and kept so it can be replayed: its history begins rejected and `reason` is the refusal",
    }),
    terminal: z.boolean(),
    reason: FailureReason.nullable(),
    deployment: DeploymentRef,
    nullifiers: z.array(z.string()),
    transactions: z.array(Attempt).meta({ description: "every signed attempt, oldest first (fee bumps replace earlier ones)" }),
    transactionHash: Bytes32.nullable().meta({ description: "the attempt that was mined, if any" }),
    block: z.strictObject({ number: z.int(), hash: Bytes32 }).nullable(),
    confirmations: z.int().meta({ description: "blocks from `block` to `observedHead`, both included; 0 while not mined" }),
    requiredConfirmations: z.int(),
    observedHead: z
      .strictObject({
        number: z.int(),
        observedAt: z.string().meta({ description: "when the runtime saw this head (ISO 8601)" }),
        ageMs: z.int().nonnegative().meta({ description: "how long before this answer that was" }),
      })
      .nullable()
      .meta({
        description:
          "the chain head `confirmations` is counted from: the last one the runtime saw (status answers never wait on the chain); null before the first. An old head means the chain is not answering",
      }),
    createdAt: z.string(),
    updatedAt: z.string(),
    history: z.array(HistoryEntry),
    action: z
      .strictObject({
        quoteId: z.string(),
        reservationId: Bytes32.meta({ description: "the Pool's reservation of the output: POST finalize takes it" }),
        reservation: z
          .strictObject({
            state: z.enum(["none", "pending", "settled", "failed", "finalized", "expired"]).meta({ description: "none until the action is mined; expired: pending past its deadline (finalize refunds it)" }),
            observedAt: z.string().meta({ description: "when the runtime read it (ISO 8601): answers never wait on the chain" }),
          })
          .nullable()
          .meta({ description: "the reservation's state as last read; null before the first read" }),
      })
      .optional()
      .meta({ description: "an external action's quote and reservation (the reservation exists once the action is mined)" }),
    finalize: z
      .strictObject({ reservationId: Bytes32 })
      .optional()
      .meta({ description: "a finalize's reservation" }),
  })
  .meta({ id: "Operation", description: "A relayed send, withdrawal or external action, and its state" });
export type Operation = z.output<typeof Operation>;

export const StatusQuery = z.strictObject({ id: z.string().min(1).max(100) });
