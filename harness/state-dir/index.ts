// A stack's state dir: its process record, what a killed run left there (or in an abandoned temp dir)
// reclaimed, the decision to resume what it holds, and stack.json. Parts: state dir, stack info.
export { stateDirPart, stackInfoPart, type StateDir } from "./parts.ts";
export { StackAlreadyRunningError, sweepAbandonedTempStacks, type LeftoverReport } from "./leftovers.ts";
export { StackInfo } from "./stack-info.ts";
