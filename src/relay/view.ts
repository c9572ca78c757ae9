import { TERMINAL_STATES, type Operation } from "./operation.ts";
import type { OperationRecord } from "./store.ts";

/** The public view of an operation: what status routes and submissions answer. */
export function operationView(op: OperationRecord, head: bigint | null, requiredConfirmations: number): Operation {
  const confirmations = op.block === null || head === null ? 0 : Math.max(0, Number(head) - op.block.number + 1);
  return {
    id: op.id,
    kind: op.kind,
    state: op.state,
    terminal: TERMINAL_STATES.has(op.state),
    reason: op.reason,
    deployment: op.request.deployment,
    nullifiers: op.nullifiers,
    transactions: op.attempts.map(({ raw: _raw, ...attempt }) => attempt),
    transactionHash: op.minedHash,
    block: op.block,
    confirmations,
    requiredConfirmations,
    createdAt: op.createdAt,
    updatedAt: op.updatedAt,
    history: op.history,
  };
}
