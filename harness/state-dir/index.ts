// A stack's state dir: its process record, what a killed run left there (or in an abandoned temp dir)
// reclaimed, and stack.json, the running stack's facts.
export {
  currentOwner,
  processRecordPath,
  reclaimStateDir,
  StackAlreadyRunningError,
  sweepAbandonedTempStacks,
  TEMP_STATE_DIR_PREFIX,
  writeProcessRecord,
  type LeftoverReport,
} from "./leftovers.ts";
export { StackInfo } from "./stack-info.ts";
