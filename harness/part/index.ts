// What every part of a stack shares: the part itself (started, stopped in reverse; after a failed
// start, what it wrote undone once all are stopped), and its start-up steps reported with their durations.
export { definePart, StackParts, type StackPart, type PartUndos } from "./part.ts";
export { timed, type StepEvent, type ProgressListener } from "./progress.ts";
