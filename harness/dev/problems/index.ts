// The dev routes' own problem codes, entered here by every dev route (harness/dev, patch, replay) without
// importing the dev routes themselves.
export { DEV_PROBLEMS, STACK_PROBLEMS, STACK_PROBLEM_STATUS, devProblem, type DevProblemCode } from "./dev-problems.ts";
