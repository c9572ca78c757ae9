/**
 * An operation's states, in order (a file of their own, with no import: `replay --expect` checks its
 * value against them without loading the schemas).
 *
 * accepted → processing → submitted → included → confirmed; terminal failures: rejected (a re-check
 * failed; nothing was broadcast; or, kept by a dev stack, a submission refused at admission), reverted (mined with status 0), expired (not broadcast in time, or its
 * nonce taken by another transaction of the relayer key; nothing of it was mined). A reorg that drops the
 * block sends included back to submitted.
 */
export const OPERATION_STATES = ["accepted", "processing", "submitted", "included", "confirmed", "rejected", "reverted", "expired"] as const;
