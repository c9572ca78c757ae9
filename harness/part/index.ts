// What every part of a stack shares: the part itself (started, stopped in reverse), and its start-up
// steps reported with their durations.
export { definePart, StackParts, type StackPart } from "./part.ts";
export { timed, type StepEvent, type ProgressListener } from "./progress.ts";
