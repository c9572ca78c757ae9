// A stack's state dir: its process record, what a killed run left there (or in an abandoned temp dir)
// reclaimed, the decision to resume what it holds, what a failed start wrote there undone, and
// stack.json. Parts: state dir, stack info.
export { stateDirPart, stackInfoPart, type StateDir } from "./parts.ts";
export { StackAlreadyRunningError, sweepAbandonedTempStacks, readProcessRecord, TEMP_STATE_DIR_PREFIX, type LeftoverReport } from "./leftovers.ts";
export { readProofHashes, writeProofHashes } from "./proof-hashes.ts";
