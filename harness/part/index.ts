// What every part of a stack shares: its start-up steps reported with their durations.
export { timed, type StepEvent, type ProgressListener } from "./progress.ts";
